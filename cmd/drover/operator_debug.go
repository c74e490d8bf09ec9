package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/droverhq/drover/apiclient"
	"github.com/droverhq/drover/structs"
)

// "drover operator debug", as Nomad's: for -duration, every -interval,
// it captures the cluster's state and the agent's metrics, the selected
// servers' and clients' profiles (every -pprof-interval) and their logs
// (GET /v1/agent/monitor), and the event stream when -event-topic names
// topics, into a directory nomad-debug-<timestamp>: under -output when
// it is given (no archive then, as Nomad), else in a temporary directory
// archived as nomad-debug-<timestamp>.tar.gz in the current directory.
//
// The bundle is laid out as Nomad's:
//
//	cluster/   agent-self, members, leader, nodes, namespaces, regions,
//	           node-pools, cli-flags (.json), eventstream.json
//	server/ID/ client/ID/   monitor.log, profile_NNNN.prof, heap_NNNN.prof,
//	           goroutine_NNNN.prof, goroutine-debug{1,2}_NNNN.txt,
//	           trace_NNNN.prof, threadcreate_NNNN.prof
//	interval/NNNN/   jobs, allocations, evaluations, deployments, nodes,
//	           variables (metadata), metrics, operator-raft,
//	           operator-scheduler, operator-autopilot-health (.json)
//	index.json the files captured
//
// A request that fails leaves {"Error": "..."} in its file, as Nomad's:
// the bundle is built whatever an agent answers.

func init() { registerSubcommand("operator debug", newOperatorDebugCommand) }

// Nomad's directory names inside the bundle.
const (
	debugClusterDir  = "cluster"
	debugClientDir   = "client"
	debugServerDir   = "server"
	debugIntervalDir = "interval"
)

// debugOptions are the flags of operator debug, parsed.
type debugOptions struct {
	duration, interval, pprofDuration, pprofInterval time.Duration
	logLevel                                         string
	logIncludeLocation                               bool
	maxNodes                                         int
	nodeClass, nodeIDs, serverIDs                    string
	stale, verbose                                   bool
	output                                           string
	topics                                           []string // "Topic:filter"; nil: no event capture
	eventIndex                                       uint64
}

func newOperatorDebugCommand() *cobra.Command {
	var address, duration, interval, pprofDuration, pprofInterval, eventTopic string
	var eventIndex int64
	var o debugOptions
	cmd := &cobra.Command{
		Use:   "debug [options]",
		Short: "Build a debug archive",
		Long: `Build an archive of the cluster's state, the agent's metrics, and the logs
and profiles of the selected servers (-server-id: names, "leader" or "all")
and client nodes (-node-id: ID prefixes or "all", at most -max-nodes, of
-node-class), captured for -duration (default 5m) every -interval
(default 30s). Profiles need agent:write, or enable_debug without ACLs.
With -output the bundle is a directory under that path; without, an
archive nomad-debug-<timestamp>.tar.gz in the current directory.`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) != 0 {
				return &exitError{code: 1, msg: "This command takes no arguments"}
			}
			var err error
			if o.duration, err = time.ParseDuration(duration); err != nil {
				return &exitError{code: 1, msg: fmt.Sprintf("Error parsing duration: %s: %v", duration, err)}
			}
			if o.interval, err = time.ParseDuration(interval); err != nil {
				return &exitError{code: 1, msg: fmt.Sprintf("Error parsing interval: %s: %v", interval, err)}
			}
			if o.interval > o.duration {
				return &exitError{code: 1, msg: fmt.Sprintf("Error parsing interval: %s is greater than duration %s", interval, duration)}
			}
			if o.interval <= 0 {
				return &exitError{code: 1, msg: fmt.Sprintf("Error parsing interval: %s must be positive", interval)}
			}
			if o.pprofDuration, err = time.ParseDuration(pprofDuration); err != nil {
				return &exitError{code: 1, msg: fmt.Sprintf("Error parsing pprof duration: %s: %v", pprofDuration, err)}
			}
			o.pprofDuration = min(o.pprofDuration, o.duration)
			if o.pprofInterval, err = time.ParseDuration(pprofInterval); err != nil {
				return &exitError{code: 1, msg: fmt.Sprintf("Error parsing pprof-interval: %s: %v", pprofInterval, err)}
			}
			o.pprofInterval = max(o.pprofInterval, o.pprofDuration)
			if o.topics, err = debugTopics(eventTopic); err != nil {
				return &exitError{code: 1, msg: fmt.Sprintf("Error parsing event topics: %v", err)}
			}
			if eventIndex < 0 {
				return &exitError{code: 1, msg: "Event stream index must be greater than zero"}
			}
			o.eventIndex = uint64(eventIndex)
			c, err := apiClientFor(cmd, address)
			if err != nil {
				return err
			}
			d := &debugRun{c: c, o: o, out: cmd.OutOrStdout(), errOut: cmd.ErrOrStderr(), region: regionFlag(cmd), namespace: namespaceOrDefault(cmd)}
			// As Nomad's, an interrupt ends the capture early and the
			// bundle is still written with what was captured.
			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGHUP, syscall.SIGINT, syscall.SIGTERM, syscall.SIGQUIT)
			defer stop()
			return d.run(ctx)
		},
	}
	addAddressFlag(cmd, &address)
	f := cmd.Flags()
	f.StringVar(&duration, "duration", "5m", "how long to capture for")
	f.StringVar(&interval, "interval", "30s", "time between captures of the cluster's state (at most -duration)")
	f.StringVar(&o.logLevel, "log-level", "TRACE", "lowest level of the log lines captured: TRACE, DEBUG, INFO, WARN or ERROR")
	f.BoolVar(&o.logIncludeLocation, "log-include-location", true, "include the source file and line of each log line")
	f.IntVar(&o.maxNodes, "max-nodes", 10, "at most this many client nodes (0: no limit)")
	f.StringVar(&o.nodeClass, "node-class", "", "only client nodes of this class")
	f.StringVar(&o.nodeIDs, "node-id", "all", `client nodes to capture: comma-separated ID prefixes, or "all"`)
	f.StringVar(&o.serverIDs, "server-id", "all", `servers to capture: comma-separated names, "leader", or "all"`)
	f.BoolVar(&o.stale, "stale", false, "let any server answer from its local state instead of the leader")
	f.StringVar(&o.output, "output", "", "parent directory of the bundle directory; no archive is built then (default: an archive in the current directory)")
	f.StringVar(&pprofDuration, "pprof-duration", "1s", "length of each CPU profile and trace (at most -duration)")
	f.StringVar(&pprofInterval, "pprof-interval", "30s", "time between profile captures (at least -pprof-duration)")
	f.StringVar(&eventTopic, "event-topic", "none", `capture the event stream: comma-separated Topic[:filter], "all", or "none"`)
	f.Int64Var(&eventIndex, "event-index", 0, "index to start the event stream from")
	f.BoolVar(&o.verbose, "verbose", false, "print each capture step")
	return cmd
}

// debugTopics parses -event-topic into the stream's topic parameters.
func debugTopics(s string) ([]string, error) {
	switch s {
	case "none", "":
		return nil, nil
	case "all":
		return []string{"*:*"}, nil
	}
	var out []string
	for _, t := range debugSplit(s) {
		topic, filter, ok := strings.Cut(t, ":")
		if !ok {
			filter = "*"
		}
		if topic == "" || filter == "" {
			return nil, fmt.Errorf("invalid topic %q: want Topic[:filter]", t)
		}
		out = append(out, topic+":"+filter)
	}
	return out, nil
}

// debugSplit splits a comma list, trimmed, without empty items.
func debugSplit(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// debugRun is one capture.
type debugRun struct {
	c                 *apiclient.Client
	o                 debugOptions
	out, errOut       io.Writer
	region, namespace string
	dir               string // the bundle directory

	mu       sync.Mutex // guards out, errOut and manifest from the capture goroutines
	manifest []string
	servers  []string
	nodes    []string

	nodesFound, nodesFailed int // for the summary
}

func (d *debugRun) say(format string, args ...any) {
	d.mu.Lock()
	defer d.mu.Unlock()
	fmt.Fprintf(d.out, format+"\n", args...)
}

func (d *debugRun) warn(format string, args ...any) {
	d.mu.Lock()
	defer d.mu.Unlock()
	fmt.Fprintf(d.errOut, format+"\n", args...)
}

func (d *debugRun) verbose(format string, args ...any) {
	if d.o.verbose {
		d.say(format, args...)
	}
}

func (d *debugRun) query() *apiclient.QueryOptions {
	return &apiclient.QueryOptions{AllowStale: d.o.stale}
}

func (d *debugRun) run(ctx context.Context) error {
	stamped := "nomad-debug-" + time.Now().UTC().Format("2006-01-02-150405Z")
	if d.o.output != "" {
		d.dir = filepath.Join(d.o.output, stamped)
		if _, err := os.Stat(d.dir); !os.IsNotExist(err) {
			return &exitError{code: 2, msg: "Output directory already exists"}
		}
		if err := os.MkdirAll(d.dir, 0o755); err != nil {
			return &exitError{code: 2, msg: fmt.Sprintf("Error creating output directory: %v", err)}
		}
	} else {
		tmp, err := os.MkdirTemp("", stamped)
		if err != nil {
			return &exitError{code: 2, msg: fmt.Sprintf("Error creating tmp directory: %v", err)}
		}
		defer os.RemoveAll(tmp)
		d.dir = tmp
	}
	d.writeJSON(debugClusterDir, "cli-flags.json", d.flagsDoc(), nil)

	if err := d.selectNodes(ctx); err != nil {
		return err
	}
	if err := d.selectServers(ctx); err != nil {
		return err
	}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	for _, id := range d.servers {
		wg.Go(func() { d.monitor(ctx, debugServerDir, id, apiclient.MonitorOptions{ServerID: id}) })
	}
	for _, id := range d.nodes {
		wg.Go(func() { d.monitor(ctx, debugClientDir, id, apiclient.MonitorOptions{NodeID: id}) })
	}
	if d.o.topics != nil {
		wg.Go(func() { d.eventStream(ctx) })
	}

	var self, namespaces, pools json.RawMessage
	_, err := d.c.Get(ctx, "/v1/agent/self", nil, &self)
	d.writeJSON(debugClusterDir, "agent-self.json", self, err)
	_, err = d.c.Get(ctx, "/v1/namespaces", d.query(), &namespaces)
	d.writeJSON(debugClusterDir, "namespaces.json", namespaces, err)
	regions, err := d.c.Regions(ctx)
	d.writeJSON(debugClusterDir, "regions.json", regions, err)
	_, err = d.c.Get(ctx, "/v1/node/pools", d.query(), &pools)
	d.writeJSON(debugClusterDir, "node-pools.json", pools, err)

	// The profiles: the first set now, as Nomad's; then, for -duration,
	// the others every -pprof-interval and the state every -interval.
	d.say("    Capture pprofInterval 0000")
	d.pprofs(ctx, 0)
	end := time.Now().Add(d.o.duration)
	if d.o.pprofInterval != d.o.pprofDuration {
		wg.Go(func() {
			for i := 1; ; i++ {
				if !debugSleep(ctx, d.o.pprofInterval, end) {
					return
				}
				d.say("    Capture pprofInterval %04d", i)
				d.pprofs(ctx, i)
			}
		})
	}
	for i := 0; ; i++ {
		d.say("    Capture interval %04d", i)
		d.state(ctx, filepath.Join(debugIntervalDir, fmt.Sprintf("%04d", i)))
		if !debugSleep(ctx, d.o.interval, end) {
			break
		}
	}
	cancel()
	wg.Wait()
	d.writeManifest()

	if d.o.output != "" {
		d.say("Created debug directory: %s", d.dir)
		return nil
	}
	archive := stamped + ".tar.gz"
	if err := debugArchive(archive, d.dir, stamped); err != nil {
		return &exitError{code: 2, msg: fmt.Sprintf("Error creating archive: %v", err)}
	}
	d.say("Created debug archive: %s", archive)
	return nil
}

// debugSleep waits for wait, or until end; false when end or ctx's end
// comes first.
func debugSleep(ctx context.Context, wait time.Duration, end time.Time) bool {
	left := time.Until(end)
	if left <= 0 {
		return false
	}
	t := time.NewTimer(min(wait, left))
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return wait < left
	}
}

// selectNodes writes the node list and picks the client nodes to capture.
func (d *debugRun) selectNodes(ctx context.Context) error {
	var all []*structs.NodeListStub
	if _, err := d.c.Get(ctx, "/v1/nodes", d.query(), &all); err != nil {
		return &exitError{code: 1, msg: fmt.Sprintf("Error querying node info: %v", err)}
	}
	d.writeJSON(debugClusterDir, "nodes.json", all, nil)
	ids := d.o.nodeIDs
	if d.o.nodeClass != "" && ids == "" {
		ids = "all"
	}
	found, failed := 0, 0
	for _, prefix := range debugSplit(ids) {
		if prefix == "all" {
			prefix = ""
		}
		var matched []*structs.NodeListStub
		for _, n := range all {
			if strings.HasPrefix(n.ID, prefix) {
				matched = append(matched, n)
			}
		}
		if len(matched) == 0 {
			d.warn("No node(s) with prefix %q found", prefix)
			failed++
			continue
		}
		found += len(matched)
		for _, n := range matched {
			if d.o.maxNodes != 0 && len(d.nodes) >= d.o.maxNodes {
				break
			}
			if d.o.nodeClass != "" && n.NodeClass != d.o.nodeClass {
				continue
			}
			if !containsString(d.nodes, n.ID) {
				d.nodes = append(d.nodes, n.ID)
			}
		}
	}
	if ids != "" && len(d.nodes) == 0 {
		if ids != "all" {
			return &exitError{code: 1, msg: fmt.Sprintf("Failed to retrieve clients, 0 nodes found in list: %s", ids)}
		}
		d.say(`Note: "-node-id=all" specified but no clients found`)
	}
	d.nodesFound, d.nodesFailed = found, failed
	return nil
}

// selectServers writes the members and the leader and picks the servers
// to capture: "all", "leader", or names by prefix, of -region if given.
func (d *debugRun) selectServers(ctx context.Context) error {
	members, err := d.c.Agent().Members(ctx)
	if err != nil {
		return &exitError{code: 1, msg: fmt.Sprintf("Failed to retrieve server list; err: %v", err)}
	}
	d.writeJSON(debugClusterDir, "members.json", members, nil)
	var leader string
	if _, err := d.c.Get(ctx, "/v1/status/leader", nil, &leader); err != nil {
		d.warn("Failed to retrieve leader; err: %v", err)
	} else if leader != "" {
		d.writeJSON(debugClusterDir, "leader.json", leader, nil)
	}
	prefixes := debugSplit(d.o.serverIDs)
	if containsString(prefixes, "leader") {
		d.servers = append(d.servers, "leader")
	}
	for _, m := range members.Members {
		if d.region != "" && m.Tags["region"] != d.region {
			continue
		}
		take := d.o.serverIDs == "all"
		for _, p := range prefixes {
			if p != "leader" && strings.HasPrefix(m.Name, p) {
				take = true
			}
		}
		if take {
			d.servers = append(d.servers, m.Name)
		}
	}
	if d.o.serverIDs != "" && len(d.servers) == 0 {
		return &exitError{code: 1, msg: fmt.Sprintf("Failed to retrieve servers, 0 members found in list: %s", d.o.serverIDs)}
	}
	d.say("Starting debugger...")
	d.say("")
	d.say("Nomad CLI Version: %s", Version)
	d.say("           Region: %s", d.region)
	d.say("        Namespace: %s", d.namespace)
	d.say("          Servers: (%d/%d) %v", len(d.servers), len(members.Members), d.servers)
	d.say("          Clients: (%d/%d) %v", len(d.nodes), d.nodesFound, d.nodes)
	if len(d.nodes) > 0 && len(d.nodes) == d.o.maxNodes {
		d.say("                   Max node count reached (%d)", d.o.maxNodes)
	}
	if d.nodesFailed > 0 {
		d.say("Client fail count: %v", d.nodesFailed)
	}
	if d.o.nodeClass != "" {
		d.say("       Node Class: %s", d.o.nodeClass)
	}
	d.say("         Interval: %s", d.o.interval)
	d.say("         Duration: %s", d.o.duration)
	d.say("   pprof Interval: %s", d.o.pprofInterval)
	if d.o.pprofDuration != time.Second {
		d.say("   pprof Duration: %s", d.o.pprofDuration)
	}
	if d.o.topics != nil {
		d.say("     Event topics: %v", d.o.topics)
	}
	d.say("")
	d.say("Capturing cluster data...")
	return nil
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// monitor copies one agent's log lines to DIR/ID/monitor.log until ctx
// ends; an error ends the file with a "monitor:" line, as Nomad's.
func (d *debugRun) monitor(ctx context.Context, dir, id string, o apiclient.MonitorOptions) {
	o.LogLevel, o.LogIncludeLocation = d.o.logLevel, d.o.logIncludeLocation
	f, err := d.create(filepath.Join(dir, id), "monitor.log")
	if err != nil {
		d.warn("%s/%s: %v", dir, id, err)
		return
	}
	defer f.Close()
	rc, err := d.c.AgentMonitor(ctx, o)
	if err != nil {
		if ctx.Err() == nil {
			fmt.Fprintf(f, "monitor: %v\n", err)
		}
		return
	}
	defer rc.Close()
	if _, err := io.Copy(f, rc); err != nil && ctx.Err() == nil {
		fmt.Fprintf(f, "monitor: %v\n", err)
	}
}

// eventStream writes the events of -event-topic to
// cluster/eventstream.json, one JSON event a line, until ctx ends.
func (d *debugRun) eventStream(ctx context.Context) {
	f, err := d.create(debugClusterDir, "eventstream.json")
	if err != nil {
		d.warn("Error capturing event stream: %v", err)
		return
	}
	defer f.Close()
	q := url.Values{"index": {strconv.FormatUint(d.o.eventIndex, 10)}, "topic": d.o.topics}
	if d.o.stale {
		q.Set("stale", "true")
	}
	rc, err := d.c.GetStream(ctx, "/v1/event/stream", q)
	if err != nil {
		if ctx.Err() == nil {
			d.warn("Error capturing event stream: failed to stream events: %v", err)
		}
		return
	}
	defer rc.Close()
	dec := json.NewDecoder(rc)
	count := 0
	for {
		var frame struct {
			Index  uint64
			Events []json.RawMessage
		}
		if err := dec.Decode(&frame); err != nil {
			break
		}
		for _, e := range frame.Events {
			count++
			f.Write(e)
			f.Write([]byte("\n"))
		}
	}
	d.verbose("Event stream captured %d events", count)
}

// pprofs captures each selected agent's profiles, as set number i.
func (d *debugRun) pprofs(ctx context.Context, i int) {
	for _, id := range d.nodes {
		d.pprof(ctx, debugClientDir, "node_id", id, i)
	}
	for _, id := range d.servers {
		d.pprof(ctx, debugServerDir, "server_id", id, i)
	}
}

// debugProfiles are the profiles of each set, as Nomad's: the name in
// /v1/agent/pprof/, the debug level (0: binary), and the file.
var debugProfiles = []struct {
	name  string
	debug int
	file  string
}{
	{"profile", 0, "profile_%04d.prof"},
	{"goroutine", 1, "goroutine-debug1_%04d.txt"},
	{"goroutine", 2, "goroutine-debug2_%04d.txt"},
	{"goroutine", 0, "goroutine_%04d.prof"},
	{"trace", 0, "trace_%04d.prof"},
	{"heap", 0, "heap_%04d.prof"},
	{"threadcreate", 0, "threadcreate_%04d.prof"},
}

// maxProfileBytes bounds one profile read.
const maxProfileBytes = 256 << 20

func (d *debugRun) pprof(ctx context.Context, dir, key, id string, i int) {
	path := filepath.Join(dir, id)
	seconds := max(int(d.o.pprofDuration.Seconds()), 1)
	for _, p := range debugProfiles {
		file := fmt.Sprintf(p.file, i)
		q := d.query()
		q.Params = map[string]string{key: id, "seconds": strconv.Itoa(seconds)}
		if p.debug > 0 {
			q.Params["debug"] = strconv.Itoa(p.debug)
		}
		d.verbose("%s: capturing %s", path, file)
		b, err := d.c.GetBytes(ctx, "/v1/agent/pprof/"+p.name, q, maxProfileBytes)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			d.warn("%s: Failed to retrieve pprof %s, err: %v", path, file, err)
			if se := (*apiclient.StatusError)(nil); errors.As(err, &se) && se.Code == http.StatusForbidden {
				d.warn("Pprof retrieval requires agent:write ACL or enable_debug=true.")
				return // every profile needs the same permission
			}
			continue
		}
		if err := d.writeFile(path, file, b); err != nil {
			d.warn("%s: Failed to write file %s, err: %v", path, file, err)
		}
	}
}

// state captures the cluster's state and the agent's metrics into dir.
func (d *debugRun) state(ctx context.Context, dir string) {
	all := d.query()
	all.Namespace = "*"
	for _, e := range []struct {
		path, file string
		q          *apiclient.QueryOptions
	}{
		{"/v1/jobs", "jobs.json", all},
		{"/v1/deployments", "deployments.json", all},
		{"/v1/evaluations", "evaluations.json", all},
		{"/v1/allocations", "allocations.json", all},
		{"/v1/nodes", "nodes.json", d.query()},
		{"/v1/vars", "variables.json", all},
		{"/v1/metrics", "metrics.json", nil},
		{"/v1/operator/raft/configuration", "operator-raft.json", d.query()},
		{"/v1/operator/scheduler/configuration", "operator-scheduler.json", d.query()},
		{"/v1/operator/autopilot/health", "operator-autopilot-health.json", d.query()},
	} {
		var v json.RawMessage
		_, err := d.c.Get(ctx, e.path, e.q, &v)
		if ctx.Err() != nil {
			return
		}
		d.writeJSON(dir, e.file, v, err)
	}
}
