package main

import (
	"fmt"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/droverhq/drover/httpapi"
)

// "drover operator scheduler get-config|set-config", as Nomad's, over
// /v1/operator/scheduler/configuration. Drover's scheduler is fixed
// (binpack, memory oversubscription on, no preemption): set-config accepts
// that configuration and the servers refuse any change, saying so.

func init() {
	groupShorts["operator scheduler"] = "Read the scheduler's configuration"
	registerSubcommand("operator scheduler get-config", newSchedulerGetConfigCommand)
	registerSubcommand("operator scheduler set-config", newSchedulerSetConfigCommand)
}

type schedulerConfigAnswer struct {
	SchedulerConfig httpapi.SchedulerConfiguration
	Index           uint64
}

func newSchedulerGetConfigCommand() *cobra.Command {
	var address string
	var o outputFlags
	cmd := &cobra.Command{
		Use:   "get-config [-json | -t TEMPLATE]",
		Short: "Show the scheduler's configuration",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := apiClientFor(cmd, address)
			if err != nil {
				return err
			}
			var a schedulerConfigAnswer
			if _, err := c.Get(cmd.Context(), "/v1/operator/scheduler/configuration", nil, &a); err != nil {
				return &exitError{code: 1, msg: fmt.Sprintf("Error querying scheduler configuration: %v", err)}
			}
			if o.set() {
				return o.write(cmd, a.SchedulerConfig)
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
				{"Modify Index", fmt.Sprint(s.ModifyIndex)},
			})
			return nil
		},
	}
	addAddressFlag(cmd, &address)
	o.add(cmd)
	return cmd
}

func newSchedulerSetConfigCommand() *cobra.Command {
	var address, algorithm string
	bools := map[string]*string{}
	cmd := &cobra.Command{
		Use:   "set-config [-scheduler-algorithm binpack] [-memory-oversubscription true] [-preempt-…-scheduler false] …",
		Short: "Set the scheduler's configuration (drover's is fixed: only it is accepted)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := apiClientFor(cmd, address)
			if err != nil {
				return err
			}
			var a schedulerConfigAnswer
			if _, err := c.Get(cmd.Context(), "/v1/operator/scheduler/configuration", nil, &a); err != nil {
				return &exitError{code: 1, msg: fmt.Sprintf("Error querying scheduler configuration: %v", err)}
			}
			s := a.SchedulerConfig
			if cmd.Flags().Changed("scheduler-algorithm") {
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
			if _, err := c.Put(cmd.Context(), "/v1/operator/scheduler/configuration", s, nil); err != nil {
				return &exitError{code: 1, msg: fmt.Sprintf("Error setting scheduler configuration: %v", err)}
			}
			fmt.Fprintln(cmd.OutOrStdout(), "Scheduler configuration updated!")
			return nil
		},
	}
	addAddressFlag(cmd, &address)
	cmd.Flags().StringVar(&algorithm, "scheduler-algorithm", "", `"binpack" (drover's; "spread" is refused)`)
	for _, name := range []string{"memory-oversubscription", "reject-job-registration", "pause-eval-broker",
		"preempt-system-scheduler", "preempt-service-scheduler", "preempt-batch-scheduler", "preempt-sysbatch-scheduler"} {
		v := new(string)
		bools[name] = v
		cmd.Flags().StringVar(v, name, "", "true or false (drover's fixed value only)")
	}
	return cmd
}
