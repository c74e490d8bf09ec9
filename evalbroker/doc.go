// Package evalbroker holds the leader's in-memory queue of evaluations and
// its tracker of blocked evaluations.
//
// The Broker hands pending evaluations to scheduler workers. Only the leader
// runs it: it starts disabled, the leader enables it on gaining leadership and
// restores it from the pending evaluations in replicated state, and disables
// it on losing leadership, which drops everything (the evaluations are still
// pending in state, so the next leader restores them).
//
// Delivery is at least once. A worker dequeues an evaluation with a token and
// must Ack it once the scheduler's results are committed, or Nack it to have
// it delivered again after a delay. An evaluation neither acked nor nacked
// within the visibility timeout is nacked for the worker, so a crashed worker
// loses nothing. After the delivery limit the evaluation is handed to the
// failure callback instead of being delivered again.
//
// At most one evaluation per job is out at a time (ready or unacked, or
// waiting out a nack delay); later evaluations for that job wait, and of those
// only the newest is kept: the others are handed to the cancel callback.
// Ready evaluations leave in priority order (higher Priority first), then by
// CreateIndex, then in enqueue order. An evaluation whose WaitUntil (or Wait)
// lies in the future becomes ready at that time, measured by the injected
// Clock. A waiting Dequeue receives an evaluation the moment it is ready;
// nothing polls.
//
// Blocked tracks evaluations that could not place every allocation for lack
// of capacity, one per job, and puts them back into the Broker when capacity
// changes.
//
// Neither type reads replicated state or writes to Raft: the leader feeds them
// and turns their callbacks into replicated writes. They never modify the
// evaluations they are given; callers copy an evaluation before changing it.
package evalbroker
