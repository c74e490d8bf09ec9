package main

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/droverhq/drover/structs"
)

func init() { operatorCommands["autopilot"] = newAutopilotCommand }

// newAutopilotCommand is "drover operator autopilot": get-config,
// set-config and health, as Nomad's.
func newAutopilotCommand() *cobra.Command {
	ap := &cobra.Command{Use: "autopilot", Short: "Read and change the autopilot configuration; show the servers' health"}
	ap.AddCommand(newAutopilotGetConfigCommand(), newAutopilotSetConfigCommand(), newAutopilotHealthCommand())
	return ap
}

func newAutopilotGetConfigCommand() *cobra.Command {
	var address string
	var o outputFlags
	cmd := &cobra.Command{
		Use:   "get-config",
		Short: "Print the cluster's autopilot configuration",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := apiClientFor(cmd, address)
			if err != nil {
				return err
			}
			conf, err := c.Operator().AutopilotConfiguration(cmd.Context())
			if err != nil {
				return fmt.Errorf("reading the autopilot configuration: %w", err)
			}
			if o.set() {
				return o.write(cmd, conf)
			}
			printAutopilotConfig(cmd.OutOrStdout(), conf)
			return nil
		},
	}
	addAddressFlag(cmd, &address)
	o.add(cmd)
	return cmd
}

// printAutopilotConfig prints the configuration as Nomad's get-config.
func printAutopilotConfig(w io.Writer, c *structs.AutopilotConfig) {
	fmt.Fprintf(w, "CleanupDeadServers = %t\n", c.CleanupDeadServers)
	fmt.Fprintf(w, "LastContactThreshold = %s\n", c.LastContactThreshold)
	fmt.Fprintf(w, "MaxTrailingLogs = %d\n", c.MaxTrailingLogs)
	fmt.Fprintf(w, "MinQuorum = %d\n", c.MinQuorum)
	fmt.Fprintf(w, "ServerStabilizationTime = %s\n", c.ServerStabilizationTime)
	fmt.Fprintf(w, "EnableRedundancyZones = %t\n", c.EnableRedundancyZones)
	fmt.Fprintf(w, "DisableUpgradeMigration = %t\n", c.DisableUpgradeMigration)
	fmt.Fprintf(w, "EnableCustomUpgrades = %t\n", c.EnableCustomUpgrades)
}

func newAutopilotSetConfigCommand() *cobra.Command {
	var (
		address                  string
		cleanup                  bool
		lastContact, stabilize   time.Duration
		maxTrailing              uint64
		minQuorum                uint
		zones, noMigrate, custom bool
	)
	cmd := &cobra.Command{
		Use:   "set-config",
		Short: "Change the cluster's autopilot configuration",
		Long: `Change the cluster's autopilot configuration. Only the flags given change; the
update is a check-and-set against the configuration read first, so a concurrent
change is not lost (run the command again).

  drover operator autopilot set-config -server-stabilization-time 30s`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := apiClientFor(cmd, address)
			if err != nil {
				return err
			}
			conf, err := c.Operator().AutopilotConfiguration(cmd.Context())
			if err != nil {
				return fmt.Errorf("reading the autopilot configuration: %w", err)
			}
			f := cmd.Flags()
			if f.Changed("cleanup-dead-servers") {
				conf.CleanupDeadServers = cleanup
			}
			if f.Changed("last-contact-threshold") {
				conf.LastContactThreshold = lastContact
			}
			if f.Changed("server-stabilization-time") {
				conf.ServerStabilizationTime = stabilize
			}
			if f.Changed("max-trailing-logs") {
				conf.MaxTrailingLogs = maxTrailing
			}
			if f.Changed("min-quorum") {
				conf.MinQuorum = minQuorum
			}
			if f.Changed("enable-redundancy-zones") {
				conf.EnableRedundancyZones = zones
			}
			if f.Changed("disable-upgrade-migration") {
				conf.DisableUpgradeMigration = noMigrate
			}
			if f.Changed("enable-custom-upgrades") {
				conf.EnableCustomUpgrades = custom
			}
			if lastContact < 0 || stabilize < 0 {
				return errors.New("durations must not be negative")
			}
			ok, err := c.Operator().SetAutopilotConfiguration(cmd.Context(), conf, true)
			if err != nil {
				return fmt.Errorf("updating the autopilot configuration: %w", err)
			}
			if !ok {
				return errors.New("configuration could not be atomically updated, please try again")
			}
			fmt.Fprintln(cmd.OutOrStdout(), "Configuration updated!")
			return nil
		},
	}
	addAddressFlag(cmd, &address)
	f := cmd.Flags()
	cleanup = true
	f.Var((*valueBool)(&cleanup), "cleanup-dead-servers", "remove dead servers from the Raft configuration (true or false, as Nomad's)")
	f.DurationVar(&lastContact, "last-contact-threshold", structs.DefaultLastContactThreshold, "a server without contact from the leader for longer is unhealthy")
	f.Uint64Var(&maxTrailing, "max-trailing-logs", structs.DefaultMaxTrailingLogs, "a server further behind the leader's log is unhealthy")
	f.UintVar(&minQuorum, "min-quorum", 0, "never remove a voter when fewer voters would remain")
	f.DurationVar(&stabilize, "server-stabilization-time", structs.DefaultServerStabilizationTime, "how long a new server stays healthy before it is promoted to voter")
	f.Var((*valueBool)(&zones), "enable-redundancy-zones", "true or false; kept, without effect (Nomad Enterprise)")
	f.Var((*valueBool)(&noMigrate), "disable-upgrade-migration", "true or false; kept, without effect (Nomad Enterprise)")
	f.Var((*valueBool)(&custom), "enable-custom-upgrades", "true or false; kept, without effect (Nomad Enterprise)")
	return cmd
}

func newAutopilotHealthCommand() *cobra.Command {
	var address string
	var o outputFlags
	cmd := &cobra.Command{
		Use:   "health",
		Short: "Print each server's health as the leader's autopilot sees it",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := apiClientFor(cmd, address)
			if err != nil {
				return err
			}
			h, err := c.Operator().AutopilotHealth(cmd.Context())
			if err != nil {
				return fmt.Errorf("reading the servers' health: %w", err)
			}
			if o.set() {
				return o.write(cmd, h)
			}
			out := cmd.OutOrStdout()
			fmt.Fprintf(out, "Healthy: %t\nFailure Tolerance: %d\nLeader: %s\n\n", h.Healthy, h.FailureTolerance, h.Leader)
			w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(w, "ID\tName\tAddress\tVoter\tHealthy\tLastIndex\tLastTerm\tLastContact\tStableSince")
			for _, s := range h.Servers {
				fmt.Fprintf(w, "%s\t%s\t%s\t%t\t%t\t%d\t%d\t%s\t%s\n", s.ID, s.Name, s.Address, s.Voter, s.Healthy,
					s.LastIndex, s.LastTerm, s.LastContact, s.StableSince.UTC().Format(time.RFC3339))
			}
			return w.Flush()
		},
	}
	addAddressFlag(cmd, &address)
	o.add(cmd)
	return cmd
}

// valueBool is a bool flag that takes its value, as Nomad's flag.BoolValue
// flags do: "-cleanup-dead-servers false" as well as "=false".
type valueBool bool

func (b *valueBool) Set(s string) error {
	v, err := strconv.ParseBool(s)
	if err != nil {
		return fmt.Errorf("want true or false (got %q)", s)
	}
	*b = valueBool(v)
	return nil
}

func (b *valueBool) String() string { return strconv.FormatBool(bool(*b)) }

func (b *valueBool) Type() string { return "true|false" }
