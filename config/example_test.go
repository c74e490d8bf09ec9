package config_test

import (
	"fmt"

	"github.com/spf13/pflag"

	"github.com/droverhq/drover/config"
)

// The agent's start-up: defaults, then files, then the flags given.
func Example() {
	file, warnings, err := config.Parse("server.hcl", []byte(`
data_dir = "/var/lib/drover"
telemetry {
  statsd_address = "127.0.0.1:8125"
}
server {
  enabled          = true
  bootstrap_expect = 3
  retry_join       = ["10.0.0.2:4646", "10.0.0.3:4646"]
}
`))
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, w := range warnings {
		fmt.Println("warning:", w)
	}

	fs := pflag.NewFlagSet("agent", pflag.ContinueOnError)
	fs.String("data-dir", "", "")
	fs.Int("bootstrap-expect", 0, "")
	_ = fs.Parse([]string{"--bootstrap-expect=-1"})
	flags, err := config.FromFlags(fs)
	if err != nil {
		fmt.Println(err)
		return
	}

	cfg := config.Default().Merge(file).Merge(flags)
	fmt.Println(cfg.DataDir, cfg.HTTPAddr(), cfg.RaftAddr())
	if err := cfg.Validate(); err != nil {
		fmt.Println(err)
	}
	// Output:
	// warning: server.hcl:4:3: telemetry.statsd_address is not supported by drover and is ignored (metrics are published at /v1/metrics only (Nomad's JSON and Prometheus))
	// /var/lib/drover 127.0.0.1:4646 127.0.0.1:4647
	// -bootstrap-expect: server.bootstrap_expect must not be negative (got -1)
}
