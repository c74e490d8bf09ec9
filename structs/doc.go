// Package structs holds drover's domain types: jobs, task groups, tasks,
// update strategies, allocations, deployments, nodes and evaluations.
//
// The types serialise to the JSON shapes of Nomad's HTTP API (PascalCase
// field names, durations as integer nanoseconds) so that Nomad tooling can
// read them. The package imports nothing else of drover; every other package
// builds on it. Objects handed to the state store are never modified after
// insert: copy first (the Copy methods are deep), then change the copy.
package structs
