package health

import "github.com/droverhq/drover/structs"

// GroupTasks splits a group's tasks as Nomad judges their health: those
// that must run (main tasks and sidecars) and the ephemeral prestart and
// poststart tasks, which may also have completed successfully (Config's
// Tasks and Ephemeral). Poststop tasks are in neither.
func GroupTasks(tg *structs.TaskGroup) (tasks, ephemeral []string) {
	for _, t := range tg.Tasks {
		switch {
		case t.IsHook(structs.TaskLifecycleHookPoststop):
		case t.IsEphemeral():
			ephemeral = append(ephemeral, t.Name)
		default:
			tasks = append(tasks, t.Name)
		}
	}
	return tasks, ephemeral
}
