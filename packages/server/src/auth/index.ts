export { authDisabledUser } from "./auth-disabled";
export { maybeUserOf, requireAdmin, setRequestUser, userOf } from "./request-user";
export type { AuthSource, RequestUser, SystemRole, TokenScope } from "./request-user";
