package autopilot

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"

	"github.com/droverhq/drover/structs"
)

// TestScenarios runs the files under testdata: each sets a configuration
// and the servers as the leader sees them, then runs passes at explicit
// times ("pass at=12s" is t0 + 12s), printing each pass's actions and
// health. Run with -rewrite to regenerate the expected output.
//
//	config stabilization=10s cleanup=true min_quorum=0 max_trailing=250 contact=200ms
//	servers
//	a leader index=100
//	b voter index=100 contact=10ms term=2
//	c nonvoter silent
//	pass at=10s
func TestScenarios(t *testing.T) {
	datadriven.Walk(t, "testdata", func(t *testing.T, path string) {
		sc := &scenario{cfg: structs.DefaultAutopilotConfig()}
		datadriven.RunTest(t, path, func(t *testing.T, td *datadriven.TestData) string {
			out, err := sc.run(td)
			if err != nil {
				return "error: " + err.Error() + "\n"
			}
			return out
		})
	})
}

type scenario struct {
	cfg     structs.AutopilotConfig
	servers []Server
	mem     map[string]Memory
}

func (sc *scenario) run(td *datadriven.TestData) (string, error) {
	switch td.Cmd {
	case "config":
		for _, a := range td.CmdArgs {
			if len(a.Vals) != 1 {
				return "", fmt.Errorf("%s takes one value", a.Key)
			}
			v := a.Vals[0]
			var err error
			switch a.Key {
			case "stabilization":
				sc.cfg.ServerStabilizationTime, err = time.ParseDuration(v)
			case "contact":
				sc.cfg.LastContactThreshold, err = time.ParseDuration(v)
			case "cleanup":
				sc.cfg.CleanupDeadServers, err = strconv.ParseBool(v)
			case "min_quorum":
				var n uint64
				n, err = strconv.ParseUint(v, 10, 32)
				sc.cfg.MinQuorum = uint(n)
			case "max_trailing":
				sc.cfg.MaxTrailingLogs, err = strconv.ParseUint(v, 10, 64)
			default:
				return "", fmt.Errorf("unknown config %q", a.Key)
			}
			if err != nil {
				return "", err
			}
		}
		return "", nil
	case "servers":
		servers, err := parseServers(td.Input)
		sc.servers = servers
		return "", err
	case "pass":
		var at string
		for _, a := range td.CmdArgs {
			if a.Key == "at" && len(a.Vals) == 1 {
				at = a.Vals[0]
			}
		}
		d, err := time.ParseDuration(at)
		if err != nil {
			return "", fmt.Errorf("pass needs at=DURATION: %w", err)
		}
		dec := Decide(Input{Config: sc.cfg, Servers: sc.servers, Memory: sc.mem, Now: t0.Add(d)})
		sc.mem = dec.Memory
		return render(dec), nil
	}
	return "", fmt.Errorf("unknown command %q", td.Cmd)
}

// parseServers reads one server a line: "ID ROLE [index=N] [term=N]
// [contact=D|never] [silent]", ROLE being leader, voter or nonvoter. A
// server answers with term 2, contact 10ms and index 0 unless told.
func parseServers(input string) ([]Server, error) {
	var out []Server
	for _, line := range strings.Split(strings.TrimSpace(input), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			return nil, fmt.Errorf("server line %q: want ID ROLE", line)
		}
		s := Server{ID: f[0], Name: f[0], Address: f[0] + ":4647"}
		switch f[1] {
		case "leader":
			s.Leader, s.Voter = true, true
		case "voter":
			s.Voter = true
		case "nonvoter":
		default:
			return nil, fmt.Errorf("server line %q: role %q", line, f[1])
		}
		st := &Stats{LastTerm: 2, LastContact: 10 * time.Millisecond}
		if s.Leader {
			st.LastContact = 0
		}
		for _, kv := range f[2:] {
			k, v, _ := strings.Cut(kv, "=")
			var err error
			switch k {
			case "silent":
				st = nil
			case "index":
				st.LastIndex, err = strconv.ParseUint(v, 10, 64)
			case "term":
				st.LastTerm, err = strconv.ParseUint(v, 10, 64)
			case "contact":
				if v == "never" {
					st.LastContact = -1
				} else {
					st.LastContact, err = time.ParseDuration(v)
				}
			default:
				return nil, fmt.Errorf("server line %q: %q", line, kv)
			}
			if err != nil {
				return nil, fmt.Errorf("server line %q: %w", line, err)
			}
		}
		s.Stats = st
		out = append(out, s)
	}
	return out, nil
}

// render prints a decision: the actions, then the health, one server a
// line, times relative to t0.
func render(d Decision) string {
	var b strings.Builder
	list := func(ids []string) string {
		if len(ids) == 0 {
			return "-"
		}
		return strings.Join(ids, ",")
	}
	fmt.Fprintf(&b, "promote: %s\nremove: %s\n", list(d.Promote), list(d.Remove))
	fmt.Fprintf(&b, "healthy=%t tolerance=%d voters=%s\n", d.Health.Healthy, d.Health.FailureTolerance, list(d.Health.Voters))
	for _, h := range d.Health.Servers {
		role := "nonvoter"
		switch {
		case h.Leader:
			role = "leader"
		case h.Voter:
			role = "voter"
		}
		health := "unhealthy"
		if h.Healthy {
			health = "healthy"
		}
		fmt.Fprintf(&b, "  %s %s %s %s index=%d since=%s\n", h.ID, role, h.SerfStatus, health, h.LastIndex, h.StableSince.Sub(t0))
	}
	return b.String()
}
