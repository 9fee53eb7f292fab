import { DeerFlowError, ValidationError } from "../errors";
import type { DeerFlowErrorOptions } from "../errors";

/** A SKILL.md is malformed: carries the file and (when known) the frontmatter key. */
export class SkillValidationError extends ValidationError {
  constructor(message: string, options: DeerFlowErrorOptions & { file?: string; key?: string } = {}) {
    super(message, { ...options, code: "skill_invalid", details: { ...options.details, file: options.file, key: options.key } });
  }
}

/** Base of the other skill failures (`skill_not_found`, `skill_already_exists`, `skill_install_rejected`…). */
export class SkillError extends DeerFlowError {
  constructor(code: string, message: string, options: DeerFlowErrorOptions = {}) {
    super(code, message, options);
  }
}

/** No skill of that name (HTTP 404). */
export class SkillNotFoundError extends SkillError {
  constructor(message: string, options: DeerFlowErrorOptions = {}) {
    super("skill_not_found", message, options);
  }
}

/** A skill of that name is already installed (HTTP 409). */
export class SkillAlreadyExistsError extends SkillError {
  constructor(message: string, options: DeerFlowErrorOptions = {}) {
    super("skill_already_exists", message, options);
  }
}

/** An archive was refused by a structural check or the static scan (HTTP 400). */
export class SkillInstallError extends SkillError {
  constructor(message: string, options: DeerFlowErrorOptions = {}) {
    super("skill_install_rejected", message, options);
  }
}
