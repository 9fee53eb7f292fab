export { isoNow } from "./iso-now";
