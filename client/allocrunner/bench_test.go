package allocrunner

import (
	"fmt"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/droverhq/drover/drivers"
	"github.com/droverhq/drover/drivers/mock"
	"github.com/droverhq/drover/structs"
)

// BenchmarkMockAllocLifecycle measures one single-task mock allocation
// through the whole client stack: alloc dir, env, task runner, health
// tracker, state file; started, seen running, killed.
func BenchmarkMockAllocLifecycle(b *testing.B) {
	d := mock.New(mock.Options{})
	data := b.TempDir()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		alloc := testAlloc(structs.JobTypeService, mockTask("web", nil))
		alloc.ID = fmt.Sprintf("alloc-%d", i)
		i++
		running := make(chan struct{}, 1)
		ar, err := New(Config{Alloc: alloc, DataDir: data, Drivers: map[string]drivers.Driver{"mock": d},
			OnUpdate: func(u Update) {
				if u.ClientStatus == structs.AllocClientStatusRunning {
					select {
					case running <- struct{}{}:
					default:
					}
				}
			}})
		if err != nil {
			b.Fatal(err)
		}
		ar.Run()
		<-running
		ar.Kill()
		<-ar.Done()
	}
}

// BenchmarkRunningMockAllocMemory reports heap and goroutines per running
// single-task mock allocation, 1,000 at a time. Its ns/op is dominated by
// creating each allocation's directories.
func BenchmarkRunningMockAllocMemory(b *testing.B) {
	const n = 1000
	data := b.TempDir()
	var perAlloc, goroutines float64
	round := 0
	for b.Loop() {
		round++
		d := mock.New(mock.Options{})
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		g0 := runtime.NumGoroutine()
		ars := make([]*AllocRunner, n)
		for i := range ars {
			alloc := testAlloc(structs.JobTypeService, mockTask("web", nil))
			// Fresh IDs each round: a state file left by an earlier round
			// would mark the task dead and nothing would run.
			alloc.ID = fmt.Sprintf("alloc-%d-%d", round, i)
			ar, err := New(Config{Alloc: alloc, DataDir: data, Drivers: map[string]drivers.Driver{"mock": d}})
			if err != nil {
				b.Fatal(err)
			}
			ar.Run()
			ars[i] = ar
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		perAlloc = float64(int64(after.HeapAlloc)-int64(before.HeapAlloc)) / n
		goroutines = float64(runtime.NumGoroutine()-g0) / n
		for _, ar := range ars {
			ar.Kill()
		}
		for _, ar := range ars {
			<-ar.Done()
		}
	}
	b.ReportMetric(perAlloc, "heap-bytes/alloc")
	b.ReportMetric(goroutines, "goroutines/alloc")
}

// BenchmarkSaveState measures one write of the state file of a running
// single-task mock allocation (its handle, its task's events): the write
// each task start and each task death makes.
func BenchmarkSaveState(b *testing.B) {
	p := runningState(b)
	path := filepath.Join(b.TempDir(), "state.json")
	b.ReportAllocs()
	for b.Loop() {
		if err := saveState(path, p); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLoadState measures reading that state file back, as a
// restarted client does for each allocation.
func BenchmarkLoadState(b *testing.B) {
	p := runningState(b)
	path := filepath.Join(b.TempDir(), "state.json")
	if err := saveState(path, p); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := loadState(path); err != nil {
			b.Fatal(err)
		}
	}
}

// runningState runs a single-task mock allocation until its task runs and
// returns the state its runner saved then.
func runningState(b testing.TB) *persisted {
	b.Helper()
	d := mock.New(mock.Options{})
	alloc := testAlloc(structs.JobTypeService, mockTask("web", nil))
	running := make(chan struct{}, 1)
	ar, err := New(Config{Alloc: alloc, DataDir: b.TempDir(), Drivers: map[string]drivers.Driver{"mock": d},
		OnUpdate: func(u Update) {
			if u.ClientStatus == structs.AllocClientStatusRunning {
				select {
				case running <- struct{}{}:
				default:
				}
			}
		}})
	if err != nil {
		b.Fatal(err)
	}
	ar.Run()
	<-running
	p, err := loadState(ar.dir.StatePath())
	ar.Kill()
	<-ar.Done()
	if err != nil || len(p.Tasks) != 1 || p.Tasks["web"].Handle == nil {
		b.Fatalf("state of a running alloc: %+v, %v", p, err)
	}
	return p
}

// BenchmarkEncodeState measures encoding the state file of a running
// single-task mock allocation, without the file's system calls.
func BenchmarkEncodeState(b *testing.B) {
	p := runningState(b)
	var buf []byte
	b.ReportAllocs()
	for b.Loop() {
		var err error
		if buf, err = encodeState(buf[:0], p); err != nil {
			b.Fatal(err)
		}
	}
}
