package allocrunner

import (
	"fmt"
	"testing"
	"time"

	"github.com/droverhq/drover/client/template/templatetest"
	"github.com/droverhq/drover/drivers"
	"github.com/droverhq/drover/drivers/mock"
	"github.com/droverhq/drover/structs"
)

// BenchmarkTemplatePrestart measures what one template that reads one
// variable adds to an allocation's start: the mock allocation's
// lifecycle (BenchmarkMockAllocLifecycle) with and without it; the
// difference is the template's cost (engine set up, one read of the
// servers over HTTP, the file written, the engine stopped).
func BenchmarkTemplatePrestart(b *testing.B) {
	nomad := templatetest.NewNomad(b)
	nomad.SetVar("nomad/jobs/shop", map[string]string{"pass": "s3cret"})
	for _, withTemplate := range []bool{false, true} {
		b.Run(fmt.Sprintf("template=%v", withTemplate), func(b *testing.B) {
			d := mock.New(mock.Options{})
			data := b.TempDir()
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				task := mockTask("web", nil)
				if withTemplate {
					task.Templates = []*structs.Template{{
						DestPath: "local/app.conf", ChangeMode: structs.TemplateChangeModeRestart,
						EmbeddedTmpl: `{{ with nomadVar "nomad/jobs/shop" }}pass={{ .pass }}{{ end }}`,
					}}
				}
				alloc := testAlloc(structs.JobTypeService, task)
				alloc.ID = fmt.Sprintf("alloc-%d", i)
				i++
				running := make(chan struct{}, 1)
				ar, err := New(Config{Alloc: alloc, DataDir: data, Drivers: map[string]drivers.Driver{"mock": d},
					Templates: TemplateConfig{Settings: templateSettings(10 * time.Second), ServerAddr: func() string { return nomad.URL }},
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
				select {
				case <-running:
				case <-time.After(10 * time.Second):
					b.Fatal("not running")
				}
				ar.Kill()
				<-ar.Done()
			}
		})
	}
}
