package main

import (
	"fmt"
	"net/url"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/droverhq/drover/httpapi"
)

// "drover operator scheduler get-config|set-config", as Nomad's, over
// /v1/operator/scheduler/configuration: the replicated scheduler
// configuration (structs.SchedulerConfiguration says what drover does with
// each field). set-config reads the configuration, changes what its flags
// name and writes it back with a check-and-set on the index it read (or
// -check-index), as Nomad's.

func init() {
	groupShorts["operator scheduler"] = "Read and change the scheduler's configuration"
	registerSubcommand("operator scheduler get-config", newSchedulerGetConfigCommand)
	registerSubcommand("operator scheduler set-config", newSchedulerSetConfigCommand)
}

func newSchedulerGetConfigCommand() *cobra.Command {
	var address string
	var o outputFlags
	cmd := &cobra.Command{
		Use:   "get-config [-json | -t TEMPLATE]",
		Short: "Display the current scheduler configuration",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := apiClientFor(cmd, address)
			if err != nil {
				return err
			}
			var a httpapi.SchedulerConfigurationResponse
			if _, err := c.Get(cmd.Context(), "/v1/operator/scheduler/configuration", nil, &a); err != nil {
				return &exitError{code: 1, msg: fmt.Sprintf("Error querying scheduler configuration: %v", err)}
			}
			if o.set() {
				return o.write(cmd, a)
			}
			s := a.SchedulerConfig
			printKV(cmd.OutOrStdout(), [][2]string{
				{"Scheduler Algorithm", s.SchedulerAlgorithm},
				{"Memory Oversubscription", fmt.Sprint(s.MemoryOversubscriptionEnabled)},
				{"Reject Job Registration", fmt.Sprint(s.RejectJobRegistration)},
				{"Pause Eval Broker", fmt.Sprint(s.PauseEvalBroker)},
				{"Preemption System Scheduler", fmt.Sprint(s.PreemptionConfig.SystemSchedulerEnabled)},
				{"Preemption Service Scheduler", fmt.Sprint(s.PreemptionConfig.ServiceSchedulerEnabled)},
				{"Preemption Batch Scheduler", fmt.Sprint(s.PreemptionConfig.BatchSchedulerEnabled)},
				{"Preemption SysBatch Scheduler", fmt.Sprint(s.PreemptionConfig.SysBatchSchedulerEnabled)},
				{"Node Limit For Feasibility Checks", fmt.Sprint(s.NodeLimitForFeasibilityChecks)},
				{"Modify Index", fmt.Sprint(s.ModifyIndex)},
			})
			return nil
		},
	}
	addAddressFlag(cmd, &address)
	o.add(cmd)
	return cmd
}

// schedulerBoolFlags are set-config's true|false flags, by name.
var schedulerBoolFlags = []string{"memory-oversubscription", "reject-job-registration", "pause-eval-broker",
	"preempt-system-scheduler", "preempt-service-scheduler", "preempt-batch-scheduler", "preempt-sysbatch-scheduler"}

func newSchedulerSetConfigCommand() *cobra.Command {
	var address, algorithm, checkIndex, nodeLimit string
	bools := map[string]*string{}
	cmd := &cobra.Command{
		Use:   "set-config [-scheduler-algorithm binpack|spread] [-memory-oversubscription true|false] [-pause-eval-broker true|false] …",
		Short: "Modify the current scheduler configuration",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var check uint64
			if checkIndex != "" {
				v, err := strconv.ParseUint(checkIndex, 10, 64)
				if err != nil {
					return &exitError{code: 1, msg: fmt.Sprintf("Error parsing check-index value %q: %v", checkIndex, err)}
				}
				check = v
			}
			c, err := apiClientFor(cmd, address)
			if err != nil {
				return err
			}
			var a httpapi.SchedulerConfigurationResponse
			if _, err := c.Get(cmd.Context(), "/v1/operator/scheduler/configuration", nil, &a); err != nil {
				return &exitError{code: 1, msg: fmt.Sprintf("Error querying for scheduler configuration: %v", err)}
			}
			s := a.SchedulerConfig
			if check > 0 && s.ModifyIndex != check {
				return &exitError{code: 1, msg: fmt.Sprintf("Error performing check index set: check-index %v does not match does not match current state value %v", check, s.ModifyIndex)}
			}
			if algorithm != "" {
				s.SchedulerAlgorithm = algorithm
			}
			for name, field := range map[string]*bool{
				"memory-oversubscription":    &s.MemoryOversubscriptionEnabled,
				"reject-job-registration":    &s.RejectJobRegistration,
				"pause-eval-broker":          &s.PauseEvalBroker,
				"preempt-system-scheduler":   &s.PreemptionConfig.SystemSchedulerEnabled,
				"preempt-service-scheduler":  &s.PreemptionConfig.ServiceSchedulerEnabled,
				"preempt-batch-scheduler":    &s.PreemptionConfig.BatchSchedulerEnabled,
				"preempt-sysbatch-scheduler": &s.PreemptionConfig.SysBatchSchedulerEnabled,
			} {
				if v := *bools[name]; v != "" {
					b, err := strconv.ParseBool(v)
					if err != nil {
						return &exitError{code: 1, msg: fmt.Sprintf("Error: -%s must be true or false (got %q)", name, v)}
					}
					*field = b
				}
			}
			if nodeLimit != "" {
				n, err := strconv.ParseUint(nodeLimit, 10, 0)
				if err != nil {
					return &exitError{code: 1, msg: fmt.Sprintf("Error: -node-limit-for-feasibility-checks must be a whole number (got %q)", nodeLimit)}
				}
				s.NodeLimitForFeasibilityChecks = uint(n)
			}
			// Check-and-set against the index read (or -check-index), as
			// Nomad's: a change made in between is not overwritten.
			q := url.Values{"cas": {strconv.FormatUint(s.ModifyIndex, 10)}}
			var res httpapi.SchedulerSetConfigurationResponse
			if _, err := c.PutQuery(cmd.Context(), "/v1/operator/scheduler/configuration", q, s, &res); err != nil {
				return &exitError{code: 1, msg: fmt.Sprintf("Error setting scheduler configuration: %v", err)}
			}
			if !res.Updated {
				return &exitError{code: 1, msg: "Scheduler configuration could not be atomically updated, please try again"}
			}
			fmt.Fprintln(cmd.OutOrStdout(), "Scheduler configuration updated!")
			return nil
		},
	}
	addAddressFlag(cmd, &address)
	cmd.Flags().StringVar(&checkIndex, "check-index", "", "update only if the configuration's modify index is this")
	cmd.Flags().StringVar(&algorithm, "scheduler-algorithm", "", `"binpack" or "spread"`)
	cmd.Flags().StringVar(&nodeLimit, "node-limit-for-feasibility-checks", "", "stored and shown; drover's scheduler considers every feasible node")
	for _, name := range schedulerBoolFlags {
		v := new(string)
		bools[name] = v
		usage := "true or false"
		if len(name) > 8 && name[:8] == "preempt-" {
			usage = "true or false (stored and shown; drover does not preempt)"
		}
		cmd.Flags().StringVar(v, name, "", usage)
	}
	return cmd
}
