package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// log_json = true makes the agent's logger write go-hclog's JSON, the
// configuration's warnings included; without it lines are text.
func TestAgentLogJSON(t *testing.T) {
	for _, jsonLogs := range []bool{true, false} {
		dir := t.TempDir()
		file := filepath.Join(dir, "agent.hcl")
		src := "data_dir = \"" + dir + "\"\nlog_json = " + map[bool]string{true: "true", false: "false"}[jsonLogs] +
			"\nserver {\n  enabled = true\n  bootstrap_expect = 1\n}\ntelemetry {\n  statsd_address = \"127.0.0.1:8125\"\n}\n"
		if err := os.WriteFile(file, []byte(src), 0o600); err != nil {
			t.Fatal(err)
		}
		cmd := newAgentCommand()
		var stderr bytes.Buffer
		af := agentFlags{configs: []string{file}}
		cfg, err := agentConfig(cmd.Flags(), af, &stderr)
		if err != nil {
			t.Fatal(err)
		}
		cfg.Logger.Named("raft").Info("hello", "index", 7)
		lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
		if len(lines) != 2 {
			t.Fatalf("log_json=%v: lines %q, want the warning and the line", jsonLogs, lines)
		}
		for _, l := range lines {
			var m map[string]any
			isJSON := json.Unmarshal([]byte(l), &m) == nil
			if isJSON != jsonLogs {
				t.Fatalf("log_json=%v: line %q", jsonLogs, l)
			}
			if jsonLogs && (m["@level"] == nil || m["@message"] == nil || m["@timestamp"] == nil) {
				t.Fatalf("not go-hclog's JSON: %q", l)
			}
		}
		if jsonLogs {
			var warn, hello map[string]any
			_ = json.Unmarshal([]byte(lines[0]), &warn)
			_ = json.Unmarshal([]byte(lines[1]), &hello)
			if warn["@level"] != "warn" || !strings.Contains(warn["@message"].(string), "telemetry.statsd_address") {
				t.Fatalf("warning line %v", warn)
			}
			if hello["@module"] != "drover.raft" || hello["index"] != float64(7) {
				t.Fatalf("log line %v", hello)
			}
		}
	}
}
