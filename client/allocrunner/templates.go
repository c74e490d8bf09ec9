package allocrunner

import (
	"context"
	"fmt"
	"time"

	"github.com/droverhq/drover/client/taskenv"
	"github.com/droverhq/drover/client/taskrunner"
	"github.com/droverhq/drover/client/template"
	"github.com/droverhq/drover/structs"
)

// identityTimeout bounds the request of a task's identity.
const identityTimeout = 30 * time.Second

// templates returns the builder of a task's template renderer: it reads
// Nomad's API from a server, in the job's namespace, with the task's
// identity, and the files its templates name through the allocation's
// directory. A renderer that cannot be built is an error and a nil hook
// (never a nil *template.Manager in the interface).
func (ar *AllocRunner) templates(t *structs.Task, env *taskenv.Env) func(*taskrunner.TaskRunner) (taskrunner.TemplateHook, error) {
	return func(tr *taskrunner.TaskRunner) (taskrunner.TemplateHook, error) {
		a, tc := ar.cfg.Alloc, ar.cfg.Templates
		srv := template.Server{Namespace: a.Job.Namespace}
		if tc.ServerAddr != nil {
			srv.Address = tc.ServerAddr()
		}
		if tc.Identity != nil {
			ctx, cancel := context.WithTimeout(context.Background(), identityTimeout)
			tok, err := tc.Identity.TaskIdentity(ctx, a.ID, t.Name)
			cancel()
			if err != nil {
				return nil, fmt.Errorf("getting the task's identity: %w", err)
			}
			srv.Token = tok
		}
		m, err := template.New(template.Config{
			Templates: t.Templates,
			TaskDir:   ar.dir.TaskDir(t.Name), AllocDir: ar.dir.SharedDir(), AllocRoot: ar.dir.Root,
			Env: env.Map(), Server: srv, Settings: tc.Settings, Lifecycle: tr,
		})
		if err != nil {
			return nil, err
		}
		return m, nil
	}
}
