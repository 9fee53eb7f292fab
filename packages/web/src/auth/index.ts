export * from "./api";
export * from "./next-path";
export * from "./session";
export * from "./messages";
