export { ParseLimitError, utf8Length } from "./limits";
export { checkYamlLimits, countYamlNodes, DEFAULT_YAML_LIMITS, parseYamlBounded } from "./bounded-yaml";
export type { YamlLimits } from "./bounded-yaml";
export { DEFAULT_MAX_JSON_DEPTH, jsonDepth } from "./json-depth";
