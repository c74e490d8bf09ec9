// Package structs holds drover's domain types: jobs, task groups, tasks,
// update strategies, allocations, deployments, nodes and evaluations.
//
// The types serialise to the JSON shapes of Nomad's HTTP API (PascalCase
// field names, durations as integer nanoseconds) so that Nomad tooling can
// read them. The package imports nothing else of drover; every other package
// builds on it. Objects handed to the state store are never modified after
// insert: copy first (the Copy methods are deep), then change the copy.
//
// The servers' log and snapshots encode the same types with MessagePack,
// keyed by field name. The types written most (an allocation, its task
// states and events, its resources and deployment status) leave out a
// string, number, bool, pointer or struct field that is empty
// (`codec:",omitempty"`; the JSON shape is unchanged): a decoder fills a
// fresh value, so the field decodes as the zero value it was, and a
// client's report or a placement takes about half the bytes. Slices and
// maps are always written, as an empty one and a missing one differ.
package structs
