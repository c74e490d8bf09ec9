package structs

// RolloutBatch is one batch of the rollout `job plan` shows before it
// runs: what the rollout will do if nothing fails (website/rollouts.md,
// "The plan before the rollout").
type RolloutBatch struct {
	Group string
	// Batch counts from 1 in each group.
	Batch int
	// Zone is the batch's zone, for a group rolled by zones.
	Zone string
	// Allocs names the allocs the batch replaces (or, for a first
	// version, places).
	Allocs []string
	// Surge is set when replacements of the batch start beside the allocs
	// they replace (max_surge).
	Surge bool
	// PauseAfter is "checkpoint" on a batch that lands on a checkpoint;
	// else "zone" on the last batch of a zone another zone follows (zone
	// by zone); else "".
	PauseAfter string
	// Analysis names the analysis runs that gate after the batch: the
	// group's each_batch analyses after a batch that replaces allocs, its
	// canary analyses (before promotion) after its canaries. A first
	// version and a revert run none.
	Analysis []string `json:",omitempty"`
}

// PauseAfter values of a RolloutBatch.
const (
	PauseAfterCheckpoint = "checkpoint"
	PauseAfterZone       = "zone"
)
