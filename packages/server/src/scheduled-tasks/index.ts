export { onScheduledRunFinished, scheduledTasksFor, schedulerSettings, startScheduler } from "./scheduled-tasks";
export type { ScheduledTasks, SchedulerSettings } from "./scheduled-tasks";
export { createScheduledRunLauncher } from "./launcher";
