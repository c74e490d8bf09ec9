// Package server runs the leader's services: the loops that turn
// replicated state into scheduling decisions and write them back through
// Raft.
//
// A Leader is built once per server with New; its Run is the leadership
// service the cluster starts when this server wins an election and
// cancels when it loses it. Run starts, from replicated state alone:
//
//   - the eval feeder, which watches the evaluations table and hands every
//     pending evaluation to the eval broker, and every blocked one to the
//     blocked tracker, and unblocks on capacity changes;
//   - NumWorkers scheduling workers, which dequeue an evaluation, reconcile
//     its job against a snapshot, place, and submit the plan;
//   - the plan applier, which checks each plan against the latest state
//     and commits the part that still fits as one Raft entry;
//   - per-node heartbeat timers, which mark a silent node down;
//   - the deployment watcher, writing through Raft;
//   - the drainer, which empties draining nodes (drainer.go).
//
// Wiring, in the agent:
//
//	leader, err := server.New(server.Config{
//		Raft:  clusterServer,  // Apply(ctx, fsm.MessageType, req)
//		State: stateMachine.State,
//		Logger: logger,
//	})
//	clusterServer.OnLeadership("scheduler", leader.Run)
//
// The HTTP API's client endpoints call RegisterNode, NodeHeartbeat and
// UpdateAllocsFromClient; its job endpoints may call RegisterJob and
// DeregisterJob, which stamp the evaluation here.
//
// Everything stops when Run's context ends. Times and IDs are stamped here,
// on the leader, before a request enters the log: the state machine never
// reads a clock. The package reaches Raft only through the narrow Raft
// interface, so it never imports the cluster or HTTP packages.
package server
