package robustness

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/droverhq/drover/apiclient"
)

// dataDirSize is the size of the tmpfs each server's data directory is
// mounted on: room for a long run's Raft log and snapshots, small enough
// that filling it is cheap.
const dataDirSize = "512m"

// mountDataDir mounts a tmpfs of dataDirSize on dir, owned by uid:gid,
// so that a fault can fill it; it returns the unmount.
func mountDataDir(dir string, uid, gid int) (func(), error) {
	opts := fmt.Sprintf("size=%s,mode=0755,uid=%d,gid=%d", dataDirSize, uid, gid)
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", opts, "tmpfs", dir).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("mount tmpfs on %s: %v: %s", dir, err, strings.TrimSpace(string(out)))
	}
	return func() { _ = exec.Command("umount", "-l", dir).Run() }, nil
}

// fillDisk fills the file system of dir (a tmpfs) to the last byte with
// files of its own, as root, and returns the heal that removes them.
func fillDisk(dir string) (func(), error) {
	fill := filepath.Join(dir, "fill")
	if err := os.MkdirAll(fill, 0o700); err != nil {
		return nil, err
	}
	free := func() { _ = os.RemoveAll(fill) }
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		free()
		return nil, err
	}
	// One large file allocated at once, then small writes until the last
	// page is taken.
	if n := int64(st.Bavail)*st.Bsize - 1<<20; n > 0 {
		f, err := os.Create(filepath.Join(fill, "big"))
		if err != nil {
			free()
			return nil, err
		}
		err = unix.Fallocate(int(f.Fd()), 0, 0, n)
		f.Close()
		if err != nil && err != unix.ENOSPC {
			free()
			return nil, fmt.Errorf("fallocate: %w", err)
		}
	}
	page := make([]byte, 4096)
	f, err := os.Create(filepath.Join(fill, "rest"))
	if err != nil {
		free()
		return nil, err
	}
	defer f.Close()
	for {
		if _, err := f.Write(page); err != nil {
			break
		}
	}
	return free, nil
}

// TestFullDisk fills a follower's disk while the register workload runs,
// and then the leader's. The follower must live through an election
// (the leader killed) it cannot write its log for; the leader must answer
// the writes it cannot store with an error that names the disk, within
// seconds, and step down; once space returns both catch up, restart on what they wrote, and
// no acknowledged write is lost.
func TestFullDisk(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real processes")
	}
	if !canPartition() {
		t.Skip("needs root (tmpfs data dirs)")
	}
	c := startCluster(t, true, "")
	ctx := context.Background()
	h := &history{t0: time.Now()}
	wctx, stop := context.WithCancel(ctx)
	wg := workload(wctx, c, h, 250*time.Millisecond, t)

	leader := c.waitLeader(60 * time.Second)
	follower := c.pick("follower")
	freeFollower, err := fillDisk(follower.dataDir)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s's disk full", follower.name)
	time.Sleep(3 * time.Second)
	leader.signal(syscall.SIGKILL)
	leader.wait()
	var newLeader *server
	waitFor(t, 30*time.Second, "a leader other than the killed one", func() bool {
		newLeader = c.leader()
		return newLeader != nil && newLeader != leader
	})
	t.Logf("%s killed; %s leads", leader.name, newLeader.name)
	time.Sleep(3 * time.Second)
	c.start(leader)
	c.waitLeader(30 * time.Second)
	// Space back on the follower before the leader's fills: two full
	// disks of three leave no quorum to write with.
	freeFollower()
	if took, err := c.converge(90*time.Second, false); err != nil {
		t.Errorf("after space returned to %s: %v", follower.name, err)
	} else {
		t.Logf("space back on %s; the servers converged in %v", follower.name, took.Round(100*time.Millisecond))
	}

	// The leader's disk: a write straight to it fails, naming the disk,
	// and it steps down. The workload stops first: a write of its in the
	// same batch would take the disk's error, and the probe "leadership
	// lost".
	stop()
	wg.Wait()
	l := c.waitLeader(30 * time.Second)
	// Writes straight to it, every 50 ms from before its disk fills to
	// 10 s after: one may be in the batch it fails to store, or queued
	// behind it; later ones are forwarded to the next leader.
	type answer struct {
		err  error
		took time.Duration
	}
	answers := make(chan answer, 1000)
	pctx, pstop := context.WithCancel(ctx)
	var pwg sync.WaitGroup
	pwg.Add(1)
	go func() {
		defer pwg.Done()
		for i := 0; pctx.Err() == nil; i++ {
			pwg.Add(1)
			go func() {
				defer pwg.Done()
				// Another job than the register, so that its history
				// stays whole.
				probe := regJob(t, i)
				probe.ID, probe.Name = "probe", "probe"
				rctx, cancel := context.WithTimeout(ctx, 20*time.Second)
				defer cancel()
				start := time.Now()
				_, err := l.api().Jobs().Register(rctx, probe)
				answers <- answer{err, time.Since(start)}
			}()
			sleepCtx(pctx, 50*time.Millisecond)
		}
	}()
	time.Sleep(500 * time.Millisecond)
	freeLeader, err := fillDisk(l.dataDir)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s's disk full (the leader)", l.name)
	waitFor(t, 20*time.Second, l.name+" to step down", func() bool {
		n := c.leader()
		return n != nil && n != l
	})
	time.Sleep(5 * time.Second)
	pstop()
	pwg.Wait()
	close(answers)
	seen := map[string]int{}
	acknowledged := 0
	for a := range answers {
		if a.err == nil {
			acknowledged++
			continue
		}
		seen[a.err.Error()]++
		// The full server's own refusal names the disk; the others are
		// an election's ("No cluster leader") and end within the hold.
		if strings.Contains(a.err.Error(), "applying") && !strings.Contains(a.err.Error(), "no space left on device") {
			t.Errorf("the full leader refused a write without naming its disk: %v", a.err)
		}
		if a.took > 10*time.Second {
			t.Errorf("a write to the full leader took %v: %v", a.took, a.err)
		}
	}
	t.Logf("writes straight to %s: %d acknowledged; refused: %v", l.name, acknowledged, seen)
	if !strings.Contains(l.logs.String(), "no space left on device") {
		t.Errorf("%s's log does not name its full disk", l.name)
	}
	time.Sleep(3 * time.Second)
	freeLeader()
	if took, err := c.converge(90*time.Second, false); err != nil {
		t.Errorf("after space returned: %v", err)
	} else {
		t.Logf("space returned; the servers converged in %v", took.Round(100*time.Millisecond))
	}
	for _, s := range []*server{follower, l} {
		s.signal(syscall.SIGKILL)
		s.wait()
		c.start(s)
	}
	for _, e := range c.crashed() {
		t.Errorf("%s", e)
	}
	if _, err := c.converge(90*time.Second, true); err != nil {
		t.Errorf("after the restarts on what they wrote with full disks: %v", err)
	}
	acked, attempted, _, verdict := h.check(t, c.dir)
	last := h.lastAcked()
	for _, s := range c.servers {
		waitFor(t, 30*time.Second, s.name+" holds the last acknowledged write", func() bool {
			job, _, err := s.api().Jobs().Info(ctx, "reg", &apiclient.QueryOptions{AllowStale: true})
			if err != nil {
				return false
			}
			v, _ := strconv.Atoi(job.Meta["v"])
			return v >= last
		})
	}
	t.Logf("writes: %d acknowledged of %d, none lost; %s", acked, attempted, verdict)
}
