package structs

// TaskLeaderDead is the event a task gets when its group's leader task
// died and the client stops it, as Nomad's.
const TaskLeaderDead = "Leader Task Dead"
