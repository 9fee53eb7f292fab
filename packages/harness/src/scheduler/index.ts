export { nextRunAt, normalizeCron, parseRunAt, Schedule, ScheduleError, validateTimezone } from "./schedule";
export type { DeleteOutcome, ScheduledTaskStore } from "./store";
export { SqliteScheduledTaskStore } from "./sqlite-store";
export { PostgresScheduledTaskStore, SCHEDULER_COMPONENT, SCHEDULER_MIGRATIONS } from "./postgres-store";
export { ScheduledTaskService } from "./service";
export type { LaunchedRun, LaunchedRunEnd, ScheduledRunFinished, ScheduledRunLauncher, ScheduledTaskServiceOptions, TickReport, TriggerOutcome } from "./service";
export type {
  CatchUpPolicy,
  NewScheduledTask,
  RunCompletion,
  ScheduledContextMode,
  ScheduledRunStatus,
  ScheduledRunTrigger,
  ScheduledTask,
  ScheduledTaskPatch,
  ScheduledTaskRun,
  ScheduledTaskStatus,
  ScheduleSpec,
  ScheduleType,
  SlotClaim,
} from "./types";
