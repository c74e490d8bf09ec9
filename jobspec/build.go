package jobspec

import (
	"fmt"
	"slices"
	"strings"

	"github.com/hashicorp/cronexpr"

	"github.com/droverhq/drover/structs"
)

// builder turns a decoded job (a specJob, where a nil pointer means "not
// written") into drover's job: defaults, the update merge, and every
// check shared by job files and API jobs.
type builder struct {
	lc *locator
	r  *report
	// parseOnly: Options.ParseOnly.
	parseOnly bool
}

func (b *builder) err(path, format string, args ...any) {
	if b.lc.bad[path] {
		return
	}
	b.r.fieldErr(b.lc, b.lc.get(path), format, args...)
}

func (b *builder) warn(path, format string, args ...any) {
	b.r.fieldWarn(b.lc, b.lc.get(path), format, args...)
}

func str(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

func (b *builder) job(aj *specJob) *structs.Job {
	j := &structs.Job{
		Region:      orStr(aj.Region, structs.DefaultRegion),
		Namespace:   orStr(aj.Namespace, structs.DefaultNamespace),
		ID:          str(aj.ID),
		Name:        str(aj.Name),
		Type:        orStr(aj.Type, structs.JobTypeService),
		Priority:    structs.DefaultJobPriority,
		Datacenters: slices.Clone(aj.Datacenters),
		NodePool:    orStr(aj.NodePool, structs.DefaultNodePool),
		Meta:        aj.Meta,
	}
	if j.Name == "" {
		j.Name = j.ID
	}
	// Nomad's rules: an ID holds no space and no NUL; the name, which
	// defaults to the ID and may differ from it, no NUL.
	switch {
	case j.ID == "":
		b.err("Job.ID", "needs a non-empty ID")
	case strings.Contains(j.ID, " "):
		b.err("Job.ID", "must not contain a space (got %q)", j.ID)
	case strings.Contains(j.ID, "\x00"):
		b.err("Job.ID", "must not contain a NUL character (got %q)", j.ID)
	}
	if strings.Contains(j.Name, "\x00") {
		b.err("Job.Name", "must not contain a NUL character (got %q)", j.Name)
	}
	lay(&j.Priority, aj.Priority)
	if j.Priority < structs.MinJobPriority || j.Priority > structs.MaxJobPriority {
		b.err("Job.Priority", "must be between %d and %d (got %d)", structs.MinJobPriority, structs.MaxJobPriority, j.Priority)
	}
	switch j.Type {
	case structs.JobTypeService, structs.JobTypeBatch, structs.JobTypeSystem, structs.JobTypeSysBatch:
	default:
		b.err("Job.Type", "must be service, batch, system or sysbatch (got %q)", j.Type)
	}
	if len(j.Datacenters) == 0 {
		j.Datacenters = []string{"*"}
	}
	for i, dc := range j.Datacenters {
		if dc == "" {
			b.err(fmt.Sprintf("Job.Datacenters[%d]", i), "must not contain an empty name")
		}
	}
	j.Constraints = b.constraints("Job.Constraints", aj.Constraints)
	j.Affinities = b.affinities("Job.Affinities", j.Type, aj.Affinities)
	j.Spreads = b.spreads("Job.Spreads", aj.Spreads)

	j.Update = b.jobUpdate(j.Type, aj.Update)
	if aj.Reschedule != nil && structs.PerNode(j.Type) {
		b.err("Job.Reschedule", "is not allowed for %s jobs (they run on every node and are not rescheduled)", j.Type)
	}
	j.Periodic = b.periodic(j.Type, aj.Periodic)
	j.ParameterizedJob = b.parameterized(j.Type, aj.ParameterizedJob) // build_dispatch.go
	j.Migrate = b.jobMigrate(j.Type, aj.Migrate)
	j.Multiregion = b.multiregion(j, aj.Multiregion) // multiregion.go
	if len(aj.TaskGroups) == 0 && !b.parseOnly {
		b.err("Job.TaskGroups", "%q has no groups", j.ID)
	}
	names := map[string]string{}
	for i, atg := range aj.TaskGroups {
		path := fmt.Sprintf("Job.TaskGroups[%d]", i)
		if atg == nil {
			b.err(path, "must not be null")
			continue
		}
		tg := b.group(path, j, aj, atg)
		if prev, dup := names[tg.Name]; dup && tg.Name != "" {
			b.err(path+".Name", "%q is defined twice (first at %s)", tg.Name, b.position(prev+".Name"))
		} else {
			names[tg.Name] = path
		}
		j.TaskGroups = append(j.TaskGroups, tg)
	}
	b.checkGroupOrder(j) // spec_group_order.go
	return j
}

// position names where path is written, for "also at" hints.
func (b *builder) position(path string) string {
	l := b.lc.get(path)
	if l.Line == 0 {
		return path
	}
	return fmt.Sprintf("line %d", l.Line)
}

func orStr(p *string, def string) string {
	if p == nil || *p == "" {
		return def
	}
	return *p
}

func (b *builder) group(path string, j *structs.Job, aj *specJob, atg *specGroup) *structs.TaskGroup {
	tg := &structs.TaskGroup{
		Name:          str(atg.Name),
		Count:         1,
		Meta:          atg.Meta,
		ShutdownDelay: atg.ShutdownDelay,
	}
	if tg.Name == "" {
		b.err(path+".Name", "is required")
	}
	if atg.Count == nil && atg.Scaling != nil && atg.Scaling.Min != nil {
		// As Nomad's: a group with a scaling block starts at its minimum.
		tg.Count = int(*atg.Scaling.Min)
	}
	lay(&tg.Count, atg.Count)
	if tg.Count < 0 {
		b.err(path+".Count", "must not be negative (got %d)", tg.Count)
	}
	if tg.ShutdownDelay != nil && *tg.ShutdownDelay < 0 {
		b.err(path+".ShutdownDelay", "must not be negative (got %s)", *tg.ShutdownDelay)
	}
	tg.Disconnect = b.disconnect(path, j.Type, atg)             // build_disconnect.go
	tg.Scaling = b.scaling(path, j.Type, tg.Count, atg.Scaling) // build_dispatch.go
	if d := atg.MaxRunDuration; d != nil && *d != 0 {
		switch {
		case *d < 0:
			b.err(path+".MaxRunDuration", "must not be negative (got %s)", *d)
		case !structs.RunsToCompletion(j.Type):
			b.err(path+".MaxRunDuration", "is for batch and sysbatch jobs only (this job's type is %q)", j.Type)
		default:
			v := *d
			tg.MaxRunDuration = &v
		}
	}
	tg.Constraints = b.constraints(path+".Constraints", atg.Constraints)
	tg.Affinities = b.affinities(path+".Affinities", j.Type, atg.Affinities)
	tg.Spreads = b.spreads(path+".Spreads", atg.Spreads)

	tg.Update = b.groupUpdate(path, j.Type, tg, aj.Update, atg.Update)

	tg.RestartPolicy = structs.DefaultRestartPolicy(j.Type)
	b.layRestart(tg.RestartPolicy, atg.RestartPolicy)
	b.checkRestart(path+".RestartPolicy", tg.RestartPolicy)

	tg.ReschedulePolicy = structs.DefaultReschedulePolicy(j.Type)
	if structs.PerNode(j.Type) {
		if atg.ReschedulePolicy != nil {
			b.err(path+".ReschedulePolicy", "is not allowed for %s jobs (they run on every node and are not rescheduled)", j.Type)
		}
	} else {
		b.layReschedule(tg.ReschedulePolicy, aj.Reschedule)
		b.layReschedule(tg.ReschedulePolicy, atg.ReschedulePolicy)
		b.checkReschedule(path+".ReschedulePolicy", tg.ReschedulePolicy)
	}

	tg.Migrate = b.groupMigrate(path, j.Type, aj.Migrate, atg.Migrate)

	tg.EphemeralDisk = &structs.EphemeralDisk{SizeMB: structs.DefaultEphemeralDiskMB}
	if d := atg.EphemeralDisk; d != nil {
		lay(&tg.EphemeralDisk.SizeMB, d.SizeMB)
		lay(&tg.EphemeralDisk.Sticky, d.Sticky)
		lay(&tg.EphemeralDisk.Migrate, d.Migrate)
		if tg.EphemeralDisk.SizeMB <= 0 {
			b.err(path+".EphemeralDisk.SizeMB", "must be positive (got %d)", tg.EphemeralDisk.SizeMB)
		}
	}

	ports := b.networks(path, tg, atg.Networks)
	for i, s := range atg.Services {
		tg.Services = append(tg.Services, b.service(fmt.Sprintf("%s.Services[%d]", path, i), s, j.Name+"-"+tg.Name, ports))
	}

	if len(atg.Tasks) == 0 {
		b.err(path+".Tasks", "%q has no tasks", tg.Name)
	}
	tg.Volumes = b.volumes(path, atg.Volumes) // build_volume.go
	names := map[string]string{}
	leaders := 0
	for i, at := range atg.Tasks {
		tpath := fmt.Sprintf("%s.Tasks[%d]", path, i)
		if at == nil {
			b.err(tpath, "must not be null")
			continue
		}
		t := b.task(tpath, j, tg, at, ports)
		if prev, dup := names[t.Name]; dup && t.Name != "" {
			b.err(tpath+".Name", "%q is defined twice in group %q (first at %s)", t.Name, tg.Name, b.position(prev+".Name"))
		} else {
			names[t.Name] = tpath
		}
		if t.Leader {
			leaders++
			if leaders == 2 {
				b.err(tpath+".Leader", "may be set on one task of a group only")
			}
		}
		tg.Tasks = append(tg.Tasks, t)
	}
	b.allocAddressModes(path, tg) // build_driver.go
	for i, s := range tg.Services {
		spath := fmt.Sprintf("%s.Services[%d]", path, i)
		if s.TaskName != "" && tg.LookupTask(s.TaskName) == nil {
			b.err(spath+".TaskName", "names no task of group %q (got %q)", tg.Name, s.TaskName)
		}
		for j, c := range s.Checks {
			cpath := fmt.Sprintf("%s.Checks[%d].TaskName", spath, j)
			switch {
			case c.TaskName != "" && tg.LookupTask(c.TaskName) == nil:
				b.err(cpath, "names no task of group %q (got %q)", tg.Name, c.TaskName)
			case c.Type == structs.CheckTypeScript && c.TaskName == "" && s.TaskName == "":
				b.err(strings.TrimSuffix(cpath, ".TaskName"), "needs task = \"NAME\": a script check of a group service runs its command in that task")
			}
		}
	}
	return tg
}

func (b *builder) task(path string, j *structs.Job, tg *structs.TaskGroup, at *specTask, ports map[string]bool) *structs.Task {
	t := &structs.Task{
		Name:          at.Name,
		Driver:        at.Driver,
		User:          at.User,
		Config:        at.Config,
		Env:           at.Env,
		Meta:          at.Meta,
		KillTimeout:   structs.DefaultKillTimeout,
		KillSignal:    at.KillSignal,
		Leader:        at.Leader,
		ShutdownDelay: at.ShutdownDelay,
	}
	switch {
	case t.Name == "":
		b.err(path+".Name", "is required")
	case strings.ContainsAny(t.Name, `/\`):
		// As Nomad's Task.Validate: the name is the task's directory in
		// the allocation, and must not lead out of it.
		b.err(path+".Name", "must not contain a slash: it names the task's directory in the allocation (got %q)", t.Name)
	case t.Name == "." || t.Name == "..":
		b.err(path+".Name", "must not be %q: it names the task's directory in the allocation", t.Name)
	case strings.ContainsRune(t.Name, 0):
		b.err(path+".Name", "must not contain a NUL character (got %q)", t.Name)
	}
	b.taskDriver(path, tg, t, ports) // build_driver.go
	if at.KillTimeout != nil {
		t.KillTimeout = *at.KillTimeout
		if t.KillTimeout < 0 {
			b.err(path+".KillTimeout", "must not be negative (got %s)", t.KillTimeout)
		}
	}
	if t.ShutdownDelay < 0 {
		b.err(path+".ShutdownDelay", "must not be negative (got %s)", t.ShutdownDelay)
	}
	if dp := at.DispatchPayload; dp != nil {
		if !structs.ValidPayloadFile(dp.File) {
			b.err(path+".DispatchPayload.File", "must be a relative path inside the task's local directory (got %q)", dp.File)
		}
		t.DispatchPayload = &structs.DispatchPayloadConfig{File: dp.File}
	}
	if l := at.Lifecycle; l != nil {
		if !structs.ValidTaskLifecycleHook(l.Hook) {
			b.err(path+".Lifecycle.Hook", "must be %q, %q or %q (got %q)",
				structs.TaskLifecycleHookPrestart, structs.TaskLifecycleHookPoststart, structs.TaskLifecycleHookPoststop, l.Hook)
		}
		t.Lifecycle = &structs.TaskLifecycle{Hook: l.Hook, Sidecar: l.Sidecar}
	}
	t.Artifacts = b.artifacts(path, at.Artifacts) // build_artifact.go
	t.VolumeMounts = b.volumeMounts(path, tg, at.VolumeMounts)
	t.Constraints = b.constraints(path+".Constraints", at.Constraints)
	t.Affinities = b.affinities(path+".Affinities", j.Type, at.Affinities)
	t.Resources = b.resources(path+".Resources", at.Resources)
	t.LogConfig = structs.DefaultLogConfig()
	if l := at.LogConfig; l != nil {
		lay(&t.LogConfig.MaxFiles, l.MaxFiles)
		lay(&t.LogConfig.MaxFileSizeMB, l.MaxFileSizeMB)
		if l.Enabled != nil {
			t.LogConfig.Disabled = !*l.Enabled
		}
		lay(&t.LogConfig.Disabled, l.Disabled)
		if t.LogConfig.MaxFiles < 1 {
			b.err(path+".LogConfig.MaxFiles", "must be at least 1 (got %d)", t.LogConfig.MaxFiles)
		}
		if t.LogConfig.MaxFileSizeMB < 1 {
			b.err(path+".LogConfig.MaxFileSizeMB", "must be at least 1 (got %d)", t.LogConfig.MaxFileSizeMB)
		}
	}
	if at.RestartPolicy != nil {
		t.RestartPolicy = tg.RestartPolicy.Copy()
		b.layRestart(t.RestartPolicy, at.RestartPolicy)
		b.checkRestart(path+".RestartPolicy", t.RestartPolicy)
	}
	for i, s := range at.Services {
		spath := fmt.Sprintf("%s.Services[%d]", path, i)
		svc := b.service(spath, s, j.Name+"-"+tg.Name+"-"+t.Name, ports)
		if svc.TaskName != "" && svc.TaskName != t.Name {
			b.err(spath+".TaskName", "must be empty or the task's own name (got %q)", svc.TaskName)
		}
		svc.TaskName = t.Name
		for j, c := range svc.Checks {
			if c.TaskName != "" && c.TaskName != t.Name {
				b.err(fmt.Sprintf("%s.Checks[%d].TaskName", spath, j), "must be empty or the task's own name (got %q)", c.TaskName)
			}
		}
		t.Services = append(t.Services, svc)
	}
	t.Templates = b.templates(path, at.Templates) // build_template.go
	return t
}

func (b *builder) resources(path string, ar *specResources) *structs.Resources {
	r := structs.DefaultResources()
	if ar == nil {
		return r
	}
	if ar.Cores != nil && *ar.Cores != 0 {
		r.Cores = *ar.Cores
		r.CPU = 0
		if ar.CPU != nil && *ar.CPU != 0 {
			b.err(path+".Cores", "cannot be set together with cpu")
		}
		if r.Cores < 0 {
			b.err(path+".Cores", "must not be negative (got %d)", r.Cores)
		}
	} else if ar.CPU != nil {
		r.CPU = *ar.CPU
		if r.CPU < 1 {
			b.err(path+".CPU", "must be at least 1 (got %d)", r.CPU)
		}
	}
	if ar.MemoryMB != nil {
		r.MemoryMB = *ar.MemoryMB
		if r.MemoryMB < 10 {
			b.err(path+".MemoryMB", "must be at least 10 (got %d)", r.MemoryMB)
		}
	}
	if ar.MemoryMaxMB != nil {
		r.MemoryMaxMB = *ar.MemoryMaxMB
		switch {
		case r.MemoryMaxMB == structs.MemoryMaxUnlimited:
			// As Nomad's: -1 sets no hard limit; memory stays what the
			// scheduler reserves.
		case r.MemoryMaxMB < 0:
			b.err(path+".MemoryMaxMB", "must be -1 (no limit), 0 (memory is the limit) or at least memory (got %d)", r.MemoryMaxMB)
		case r.MemoryMaxMB != 0 && r.MemoryMaxMB < r.MemoryMB:
			b.err(path+".MemoryMaxMB", "must not be less than memory (%d < %d)", r.MemoryMaxMB, r.MemoryMB)
		}
	}
	return r
}

// periodic builds a job's periodic block: enabled unless it says not,
// cron specs only, for batch and sysbatch jobs, as Nomad's.
func (b *builder) periodic(typ string, ap *specPeriodic) *structs.PeriodicConfig {
	if ap == nil {
		return nil
	}
	p := &structs.PeriodicConfig{Enabled: true, SpecType: structs.PeriodicSpecCron}
	lay(&p.Enabled, ap.Enabled)
	lay(&p.Spec, ap.Spec)
	lay(&p.SpecType, ap.SpecType)
	lay(&p.ProhibitOverlap, ap.ProhibitOverlap)
	lay(&p.TimeZone, ap.TimeZone)
	p.Specs = append(p.Specs, ap.Specs...)
	if typ != structs.JobTypeBatch && typ != structs.JobTypeSysBatch {
		b.err("Job.Periodic", "is only allowed for batch and sysbatch jobs (got %s)", typ)
	}
	if p.SpecType != structs.PeriodicSpecCron {
		b.err("Job.Periodic.SpecType", "must be %q (got %q)", structs.PeriodicSpecCron, p.SpecType)
	}
	if len(p.AllSpecs()) == 0 {
		b.err("Job.Periodic.Specs", "a periodic job needs at least one cron spec (crons = [...])")
	}
	for i, s := range p.Specs {
		if _, err := cronexpr.Parse(s); err != nil {
			b.err(fmt.Sprintf("Job.Periodic.Specs[%d]", i), "%q is not a valid cron spec (%v)", s, err)
		}
	}
	if p.Spec != "" {
		if _, err := cronexpr.Parse(p.Spec); err != nil {
			b.err("Job.Periodic.Spec", "%q is not a valid cron spec (%v)", p.Spec, err)
		}
	}
	if _, err := p.Location(); err != nil {
		b.err("Job.Periodic.TimeZone", "unknown time zone %q", p.TimeZone)
	}
	return p
}
