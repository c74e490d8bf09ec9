package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/droverhq/drover/client"
	"github.com/droverhq/drover/client/allocfs"
	"github.com/droverhq/drover/structs"
)

// The client's endpoints, served by every agent that runs a client (on
// its node's HTTPAddr; see client_stats.go for the stats, and
// client_forward.go for how an agent that does not hold the allocation
// forwards to the one that does):
//
//	GET /v1/client/fs/logs/{alloc_id}?task=T&type=stdout|stderr
//	    &origin=start|end&offset=N&follow=true|false&plain=true|false
//
// as Nomad's. A task's log is its files alloc/logs/<task>.<type>.0, .1, …
// (see drivers/rawexec/logs.go) read in index order as one stream. offset
// counts bytes from the origin. With plain the answer is the raw bytes;
// without, Nomad's stream frames: JSON objects {"Offset", "Data" (base64),
// "File"} one after another. With follow the answer goes on with the bytes
// the task writes until the task is dead and everything is sent, or the
// caller goes away. 404 for an alloc the client does not hold or a task
// its group does not have; 400 for bad parameters.

// logPollInterval is how often a followed log is checked for new bytes.
const logPollInterval = 100 * time.Millisecond

// logChunk bounds one read (and one frame).
const logChunk = 64 << 10

// allocSource is what the client endpoints need of the client.
type allocSource interface {
	Alloc(id string) (client.AllocInfo, bool)
}

type clientHandler struct {
	src    allocSource
	stats  statsSource  // nil: the stats endpoints are not served
	checks checksSource // nil: the checks endpoint is not served
	ops    allocOps     // nil: exec, restart and signal are not served
	logger hclog.Logger
	poll   time.Duration
}

func newClientHandler(src allocSource, logger hclog.Logger) http.Handler {
	h := &clientHandler{src: src, logger: logger.Named("http"), poll: logPollInterval}
	if s, ok := src.(statsSource); ok {
		h.stats = s
	}
	if o, ok := src.(allocOps); ok {
		h.ops = o
	}
	if c, ok := src.(checksSource); ok {
		h.checks = c
	}
	return h.routes()
}

func (h *clientHandler) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/client/fs/logs/{alloc_id}", h.logs)
	if h.stats != nil {
		mux.HandleFunc("GET /v1/client/allocation/{alloc_id}/stats", h.allocStats)
		mux.HandleFunc("GET /v1/client/stats", h.hostStats)
	}
	if h.checks != nil {
		mux.HandleFunc("GET /v1/client/allocation/{alloc_id}/checks", h.allocChecks)
	}
	if src, ok := h.src.(identitySource); ok {
		h.identityRoutes(mux, src) // client_identity.go
	}
	if h.ops != nil {
		// See client_alloc_ops.go.
		mux.HandleFunc("GET /v1/client/allocation/{alloc_id}/exec", h.exec)
		for _, m := range []string{"PUT", "POST"} {
			mux.HandleFunc(m+" /v1/client/allocation/{alloc_id}/restart", h.restart)
			mux.HandleFunc(m+" /v1/client/allocation/{alloc_id}/signal", h.signal)
		}
	}
	return mux
}

// logRequest is a parsed logs request.
type logRequest struct {
	alloc, task, typ string
	fromEnd          bool
	offset           int64
	follow, plain    bool
}

// httpError is an answer other than 200.
type httpError struct {
	code int
	msg  string
}

func (e *httpError) Error() string { return e.msg }

func badRequest(format string, args ...any) error {
	return &httpError{code: http.StatusBadRequest, msg: fmt.Sprintf(format, args...)}
}

func parseLogRequest(r *http.Request) (*logRequest, error) {
	q := r.URL.Query()
	lr := &logRequest{alloc: r.PathValue("alloc_id"), task: q.Get("task"), typ: q.Get("type")}
	if lr.task == "" {
		return nil, badRequest("must provide task name")
	}
	if lr.typ != "stdout" && lr.typ != "stderr" {
		return nil, badRequest("type must be stdout or stderr (got %q)", lr.typ)
	}
	switch o := q.Get("origin"); o {
	case "", "start":
	case "end":
		lr.fromEnd = true
	default:
		return nil, badRequest("origin must be start or end (got %q)", o)
	}
	if v := q.Get("offset"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			return nil, badRequest("offset must be a non-negative number (got %q)", v)
		}
		lr.offset = n
	}
	for _, b := range []struct {
		name string
		dst  *bool
	}{{"follow", &lr.follow}, {"plain", &lr.plain}} {
		if v := q.Get(b.name); v != "" {
			x, err := strconv.ParseBool(v)
			if err != nil {
				return nil, badRequest("%s must be true or false (got %q)", b.name, v)
			}
			*b.dst = x
		}
	}
	return lr, nil
}

func (h *clientHandler) logs(w http.ResponseWriter, r *http.Request) {
	lr, err := parseLogRequest(r)
	if err == nil {
		err = h.checkTask(lr)
	}
	var root *allocfs.Root
	if err == nil {
		root, err = h.openLogs(lr)
	}
	if root != nil {
		defer root.Close()
	}
	if err != nil {
		code := http.StatusInternalServerError
		var he *httpError
		if errors.As(err, &he) {
			code = he.code
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(code)
		fmt.Fprintln(w, err.Error())
		return
	}
	if lr.plain {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	} else {
		w.Header().Set("Content-Type", "application/json")
	}
	w.WriteHeader(http.StatusOK)
	out := &logWriter{w: w, plain: lr.plain}
	if f, ok := w.(http.Flusher); ok {
		out.flush = f.Flush
	}
	if err := h.stream(r.Context(), root, lr, out); err != nil && r.Context().Err() == nil {
		h.logger.Debug("streaming logs ended", "alloc_id", lr.alloc, "task", lr.task, "error", err)
	}
}

// checkTask answers 404 unless the client holds the alloc and its group
// has the task.
func (h *clientHandler) checkTask(lr *logRequest) error {
	info, ok := h.src.Alloc(lr.alloc)
	if !ok {
		return &httpError{code: http.StatusNotFound, msg: fmt.Sprintf("unknown allocation %q", lr.alloc)}
	}
	if a := info.Alloc; a != nil && a.Job != nil {
		if tg := a.Job.LookupTaskGroup(a.TaskGroup); tg != nil && tg.LookupTask(lr.task) != nil {
			return nil
		}
	}
	return &httpError{code: http.StatusNotFound, msg: fmt.Sprintf("unknown task %q in allocation %q", lr.task, lr.alloc)}
}

// openLogs opens the allocation's directory, through which alone the
// task's log files are read (a task can put a symlink or a FIFO in the
// place of one; see allocfs), and refuses with 400 a log whose directory
// or files are not what the client writes: the directory leading out of
// the allocation, or a file that is not a regular file.
func (h *clientHandler) openLogs(lr *logRequest) (*allocfs.Root, error) {
	info, _ := h.src.Alloc(lr.alloc)
	root, err := allocfs.Open(info.Dir.Root)
	if err != nil {
		return nil, err
	}
	_, _, odd, err := logFiles(root, lr.task+"."+lr.typ)
	switch {
	case errors.Is(err, allocfs.ErrEscapes) || errors.Is(err, allocfs.ErrNotRegular):
		err = badRequest("task %q's log directory is refused: %v", lr.task, err)
	case err != nil && !errors.Is(err, fs.ErrNotExist):
	case len(odd) > 0:
		err = badRequest("task %q's log is refused: %s is not a regular file (the task put a symbolic link or a special file in its place)", lr.task, strings.Join(odd, ", "))
	default:
		return root, nil
	}
	h.logger.Warn("refusing a task's log", "alloc_id", lr.alloc, "task", lr.task, "error", err)
	root.Close()
	return nil, err
}

// taskDone reports whether the task will write no more: it is dead, or
// the client no longer holds its alloc.
func (h *clientHandler) taskDone(lr *logRequest) bool {
	info, ok := h.src.Alloc(lr.alloc)
	if !ok {
		return true
	}
	st := info.TaskStates[lr.task]
	return st != nil && st.State == structs.TaskStateDead
}

// logPos is a position in a task's log: a file index and an offset in it.
type logPos struct {
	index int
	off   int64
}

// logFiles lists the indexes of a task's log files in the allocation's
// alloc/logs, ascending, with their sizes. Only regular files count: the
// names of others (a symlink, a FIFO a task put there) are returned in
// odd, and never opened.
func logFiles(root *allocfs.Root, base string) (idx []int, sizes map[int]int64, odd []string, err error) {
	entries, err := root.ReadDir(logDir)
	if err != nil {
		return nil, nil, nil, err
	}
	sizes = map[int]int64{}
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), base+".")
		if !ok {
			continue
		}
		n, err := strconv.Atoi(rest)
		if err != nil || n < 0 || strconv.Itoa(n) != rest {
			continue
		}
		if !e.Type().IsRegular() {
			odd = append(odd, logDir+"/"+e.Name())
			continue
		}
		fi, err := e.Info()
		if err != nil || !fi.Mode().IsRegular() {
			continue
		}
		idx = append(idx, n)
		sizes[n] = fi.Size()
	}
	slices.Sort(idx)
	return idx, sizes, odd, nil
}

// logDir is where the tasks' logs are, relative to the allocation's
// directory.
const logDir = "alloc/logs"

// startPos finds where the stream begins: offset bytes after the start of
// the first file, or before the end of the last.
func startPos(idx []int, sizes map[int]int64, offset int64, fromEnd bool) logPos {
	if len(idx) == 0 {
		return logPos{}
	}
	if fromEnd {
		for i := len(idx) - 1; i >= 0; i-- {
			n := idx[i]
			if offset <= sizes[n] {
				return logPos{index: n, off: sizes[n] - offset}
			}
			offset -= sizes[n]
		}
		return logPos{index: idx[0]}
	}
	for _, n := range idx {
		if offset <= sizes[n] {
			return logPos{index: n, off: offset}
		}
		offset -= sizes[n]
	}
	last := idx[len(idx)-1]
	return logPos{index: last, off: sizes[last]}
}

// stream copies the log from the request's position, following it when
// asked. Files are opened by name for every read, so that a rotation
// (which renames the live file and puts a copy of it in its place) never
// makes the reader miss or repeat bytes.
func (h *clientHandler) stream(ctx context.Context, root *allocfs.Root, lr *logRequest, out *logWriter) error {
	base := lr.task + "." + lr.typ
	var pos logPos
	started := false
	for {
		done := !lr.follow || h.taskDone(lr)
		idx, sizes, odd, err := logFiles(root, base)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		if len(odd) > 0 {
			// Put in place while the log was streamed: never read.
			return fmt.Errorf("%s: %w", strings.Join(odd, ", "), allocfs.ErrNotRegular)
		}
		if !started && len(idx) > 0 {
			pos, started = startPos(idx, sizes, lr.offset, lr.fromEnd), true
		}
		if started {
			if pos, err = h.drain(root, base, idx, pos, out); err != nil {
				return err
			}
		}
		if done {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(h.poll):
		}
	}
}

// drain sends everything from pos to the end of the last file and returns
// the new position.
func (h *clientHandler) drain(root *allocfs.Root, base string, idx []int, pos logPos, out *logWriter) (logPos, error) {
	for {
		name := logDir + "/" + base + "." + strconv.Itoa(pos.index)
		n, err := copyFrom(root, name, pos.off, out)
		pos.off += n
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return pos, err
		}
		// Move on to the next file, if there is one.
		i, _ := slices.BinarySearch(idx, pos.index+1)
		if i >= len(idx) {
			return pos, nil
		}
		pos = logPos{index: idx[i]}
	}
}

// copyFrom copies name, a log file under the allocation's directory, from
// off to its end into out and returns how many bytes it copied. It is
// opened through allocfs: a symlink out of the allocation is refused
// (ErrEscapes), a FIFO or device too (ErrNotRegular) without blocking.
func copyFrom(root *allocfs.Root, name string, off int64, out *logWriter) (int64, error) {
	f, err := root.Open(name)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	if _, err := f.Seek(off, io.SeekStart); err != nil {
		return 0, err
	}
	var total int64
	buf := make([]byte, logChunk)
	for {
		n, err := f.Read(buf)
		if n > 0 {
			if werr := out.write(buf[:n], name, off+total+int64(n)); werr != nil {
				return total, werr
			}
			total += int64(n)
		}
		if errors.Is(err, io.EOF) {
			return total, nil
		}
		if err != nil {
			return total, err
		}
	}
}

// logWriter writes raw bytes (plain) or Nomad's stream frames, flushing
// after each.
type logWriter struct {
	w     io.Writer
	plain bool
	flush func()
}

// streamFrame is Nomad's frame of a streamed file.
type streamFrame struct {
	Offset int64
	Data   []byte
	File   string
}

func (lw *logWriter) write(p []byte, file string, offset int64) error {
	var err error
	if lw.plain {
		_, err = lw.w.Write(p)
	} else {
		err = json.NewEncoder(lw.w).Encode(streamFrame{Offset: offset, Data: p, File: file})
	}
	if err == nil && lw.flush != nil {
		lw.flush()
	}
	return err
}
