package jobspec

import (
	"fmt"

	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
)

// job decodes a job block as written.
func (d *decoder) job(b *hclsyntax.Block) *specJob {
	const path = "Job"
	label := b.Labels[0]
	d.lc.set(path, d.at(b.TypeRange, "job"))
	d.lc.set(path+".ID", d.at(b.LabelRanges[0], "job"))
	attrs, blocks := d.content(b.Body, "job")
	aj := &specJob{ID: &label, Name: &label}
	if a := attrs["id"]; a != nil {
		if id := d.str(a, path+".ID", "job.id"); id != nil && *id != label {
			d.r.errorf(d.at(a.SrcRange, "job.id"), "job.id must equal the job label %q (got %q)", label, *id)
		}
	}
	if a := attrs["name"]; a != nil {
		// The name defaults to the label (the ID) and may differ, as Nomad's.
		if n := d.str(a, path+".Name", "job.name"); n != nil {
			aj.Name = n
		}
	}
	aj.Region = d.str(attrs["region"], path+".Region", "job.region")
	aj.Namespace = d.str(attrs["namespace"], path+".Namespace", "job.namespace")
	aj.Type = d.str(attrs["type"], path+".Type", "job.type")
	aj.Priority = d.int(attrs["priority"], path+".Priority", "job.priority")
	aj.Datacenters = d.strs(attrs["datacenters"], path+".Datacenters", "job.datacenters")
	aj.NodePool = d.str(attrs["node_pool"], path+".NodePool", "job.node_pool")
	aj.Meta = d.strMap(attrs, blocks, "meta", path+".Meta", "job.meta")
	aj.Constraints = d.constraints(blocks["constraint"], path+".Constraints")
	aj.Affinities = d.affinities(blocks["affinity"], path+".Affinities")
	aj.Spreads = d.spreads(blocks["spread"], path+".Spreads")
	if bs := blocks["update"]; len(bs) > 0 {
		aj.Update = d.update(bs[0], path+".Update")
	}
	if bs := blocks["reschedule"]; len(bs) > 0 {
		aj.Reschedule = d.reschedule(bs[0], path+".Reschedule")
	}
	if bs := blocks["periodic"]; len(bs) > 0 {
		aj.Periodic = d.periodic(bs[0], path+".Periodic")
	}
	if bs := blocks["migrate"]; len(bs) > 0 {
		aj.Migrate = d.migrate(bs[0], path+".Migrate")
	}
	if bs := blocks["parameterized"]; len(bs) > 0 {
		aj.ParameterizedJob = d.parameterized(bs[0], path+".ParameterizedJob")
	}
	if bs := blocks["multiregion"]; len(bs) > 0 {
		aj.Multiregion = d.multiregion(bs[0], path+".Multiregion") // multiregion.go
	}
	// A task written straight in the job is a group of its name with
	// count 1, placed before the groups, as Nomad's job files make it.
	for _, tb := range blocks["task"] {
		gpath := fmt.Sprintf("%s.TaskGroups[%d]", path, len(aj.TaskGroups))
		d.lc.set(gpath, d.at(tb.TypeRange, "task"))
		d.lc.set(gpath+".Name", d.at(tb.LabelRanges[0], "task"))
		d.lc.set(gpath+".Tasks", d.at(tb.TypeRange, "task"))
		name := tb.Labels[0]
		aj.TaskGroups = append(aj.TaskGroups, &specGroup{Name: &name, Tasks: []*specTask{d.task(tb, gpath+".Tasks[0]")}})
	}
	for _, gb := range blocks["group"] {
		aj.TaskGroups = append(aj.TaskGroups, d.group(gb, fmt.Sprintf("%s.TaskGroups[%d]", path, len(aj.TaskGroups))))
	}
	if len(aj.TaskGroups) == 0 {
		d.lc.set(path+".TaskGroups", d.at(b.TypeRange, "job"))
	}
	return aj
}

func (d *decoder) group(b *hclsyntax.Block, path string) *specGroup {
	name := b.Labels[0]
	d.lc.set(path, d.at(b.TypeRange, "group"))
	d.lc.set(path+".Name", d.at(b.LabelRanges[0], "group"))
	d.lc.set(path+".Tasks", d.at(b.TypeRange, "group"))
	attrs, blocks := d.content(b.Body, "group")
	tg := &specGroup{Name: &name}
	tg.Count = d.int(attrs["count"], path+".Count", "group.count")
	tg.ShutdownDelay = d.dur(attrs["shutdown_delay"], path+".ShutdownDelay", "group.shutdown_delay")
	tg.MaxRunDuration = d.dur(attrs["max_run_duration"], path+".MaxRunDuration", "group.max_run_duration")
	tg.StopAfterClientDisconnect = d.dur(attrs["stop_after_client_disconnect"], path+".StopAfterClientDisconnect", "group.stop_after_client_disconnect")
	tg.MaxClientDisconnect = d.dur(attrs["max_client_disconnect"], path+".MaxClientDisconnect", "group.max_client_disconnect")
	if bs := blocks["disconnect"]; len(bs) > 0 {
		tg.Disconnect = d.disconnect(bs[0], path+".Disconnect")
	}
	tg.Meta = d.strMap(attrs, blocks, "meta", path+".Meta", "group.meta")
	tg.Constraints = d.constraints(blocks["constraint"], path+".Constraints")
	tg.Affinities = d.affinities(blocks["affinity"], path+".Affinities")
	tg.Spreads = d.spreads(blocks["spread"], path+".Spreads")
	if bs := blocks["update"]; len(bs) > 0 {
		tg.Update = d.update(bs[0], path+".Update")
	}
	if bs := blocks["restart"]; len(bs) > 0 {
		tg.RestartPolicy = d.restart(bs[0], path+".RestartPolicy")
	}
	if bs := blocks["reschedule"]; len(bs) > 0 {
		tg.ReschedulePolicy = d.reschedule(bs[0], path+".ReschedulePolicy")
	}
	if bs := blocks["migrate"]; len(bs) > 0 {
		tg.Migrate = d.migrate(bs[0], path+".Migrate")
	}
	if bs := blocks["ephemeral_disk"]; len(bs) > 0 {
		tg.EphemeralDisk = d.ephemeralDisk(bs[0], path+".EphemeralDisk")
	}
	for i, nb := range blocks["network"] {
		tg.Networks = append(tg.Networks, d.network(nb, fmt.Sprintf("%s.Networks[%d]", path, i)))
	}
	for i, sb := range blocks["service"] {
		tg.Services = append(tg.Services, d.service(sb, fmt.Sprintf("%s.Services[%d]", path, i)))
	}
	if bs := blocks["scaling"]; len(bs) > 0 {
		tg.Scaling = d.scaling(bs[0], path+".Scaling")
	}
	for _, vb := range blocks["volume"] {
		if tg.Volumes == nil {
			tg.Volumes = map[string]*specVolume{}
		}
		name := vb.Labels[0]
		if _, dup := tg.Volumes[name]; dup {
			d.r.errorf(d.at(vb.LabelRanges[0], "volume"), "duplicate volume %q in group", name)
			continue
		}
		tg.Volumes[name] = d.volume(vb, path+".Volumes."+name)
	}
	for i, tb := range blocks["task"] {
		tg.Tasks = append(tg.Tasks, d.task(tb, fmt.Sprintf("%s.Tasks[%d]", path, i)))
	}
	return tg
}

func (d *decoder) task(b *hclsyntax.Block, path string) *specTask {
	d.lc.set(path, d.at(b.TypeRange, "task"))
	d.lc.set(path+".Name", d.at(b.LabelRanges[0], "task"))
	attrs, blocks := d.content(b.Body, "task")
	t := &specTask{Name: b.Labels[0]}
	if s := d.str(attrs["driver"], path+".Driver", "task.driver"); s != nil {
		t.Driver = *s
	}
	if s := d.str(attrs["user"], path+".User", "task.user"); s != nil {
		t.User = *s
	}
	if s := d.str(attrs["kill_signal"], path+".KillSignal", "task.kill_signal"); s != nil {
		t.KillSignal = *s
	}
	if v := d.bool(attrs["leader"], path+".Leader", "task.leader"); v != nil {
		t.Leader = *v
	}
	t.KillTimeout = d.dur(attrs["kill_timeout"], path+".KillTimeout", "task.kill_timeout")
	if v := d.dur(attrs["shutdown_delay"], path+".ShutdownDelay", "task.shutdown_delay"); v != nil {
		t.ShutdownDelay = *v
	}
	t.Env = d.strMap(attrs, blocks, "env", path+".Env", "task.env")
	t.Meta = d.strMap(attrs, blocks, "meta", path+".Meta", "task.meta")
	if a := attrs["config"]; a != nil {
		d.record(a, path+".Config", "task.config")
		if v, ok := d.value(a, "task.config", cty.DynamicPseudoType); ok {
			x, err := anyValue(v)
			m, isMap := x.(map[string]any)
			if err != nil || !isMap {
				d.r.errorf(d.at(a.Expr.Range(), "task.config"), "task.config must be an object")
			} else {
				t.Config = m
			}
		}
	} else if bs := blocks["config"]; len(bs) > 0 {
		d.lc.set(path+".Config", d.at(bs[0].TypeRange, "task.config"))
		t.Config = d.freeform(bs[0].Body, "task.config", path+".Config")
	}
	t.Constraints = d.constraints(blocks["constraint"], path+".Constraints")
	t.Affinities = d.affinities(blocks["affinity"], path+".Affinities")
	if bs := blocks["resources"]; len(bs) > 0 {
		t.Resources = d.resources(bs[0], path+".Resources")
	}
	if bs := blocks["restart"]; len(bs) > 0 {
		t.RestartPolicy = d.restart(bs[0], path+".RestartPolicy")
	}
	if bs := blocks["logs"]; len(bs) > 0 {
		t.LogConfig = d.logs(bs[0], path+".LogConfig")
	}
	for i, sb := range blocks["service"] {
		t.Services = append(t.Services, d.service(sb, fmt.Sprintf("%s.Services[%d]", path, i)))
	}
	if bs := blocks["lifecycle"]; len(bs) > 0 {
		b := bs[0]
		d.lc.set(path+".Lifecycle", d.at(b.TypeRange, "lifecycle"))
		lattrs, _ := d.content(b.Body, "lifecycle")
		t.Lifecycle = &specLifecycle{}
		if s := d.str(lattrs["hook"], path+".Lifecycle.Hook", "lifecycle.hook"); s != nil {
			t.Lifecycle.Hook = *s
		}
		if v := d.bool(lattrs["sidecar"], path+".Lifecycle.Sidecar", "lifecycle.sidecar"); v != nil {
			t.Lifecycle.Sidecar = *v
		}
	}
	if bs := blocks["dispatch_payload"]; len(bs) > 0 {
		b := bs[0]
		d.lc.set(path+".DispatchPayload", d.at(b.TypeRange, "dispatch_payload"))
		dattrs, _ := d.content(b.Body, "dispatch_payload")
		t.DispatchPayload = &specDispatchPayload{}
		if s := d.str(dattrs["file"], path+".DispatchPayload.File", "dispatch_payload.file"); s != nil {
			t.DispatchPayload.File = *s
		}
	}
	for i, tb := range blocks["template"] {
		t.Templates = append(t.Templates, d.template(tb, fmt.Sprintf("%s.Templates[%d]", path, i)))
	}
	for i, vb := range blocks["volume_mount"] {
		p := fmt.Sprintf("%s.VolumeMounts[%d]", path, i)
		d.lc.set(p, d.at(vb.TypeRange, "volume_mount"))
		vattrs, _ := d.content(vb.Body, "volume_mount")
		t.VolumeMounts = append(t.VolumeMounts, &specVolumeMount{
			Volume:      d.str(vattrs["volume"], p+".Volume", "volume_mount.volume"),
			Destination: d.str(vattrs["destination"], p+".Destination", "volume_mount.destination"),
			ReadOnly:    d.bool(vattrs["read_only"], p+".ReadOnly", "volume_mount.read_only"),
		})
	}
	for i, ab := range blocks["artifact"] {
		t.Artifacts = append(t.Artifacts, d.artifact(ab, fmt.Sprintf("%s.Artifacts[%d]", path, i)))
	}
	return t
}

func (d *decoder) artifact(b *hclsyntax.Block, path string) *specArtifact {
	d.lc.set(path, d.at(b.TypeRange, "artifact"))
	attrs, blocks := d.content(b.Body, "artifact")
	a := &specArtifact{
		GetterSource:   d.str(attrs["source"], path+".GetterSource", "artifact.source"),
		GetterOptions:  d.strMap(attrs, blocks, "options", path+".GetterOptions", "artifact.options"),
		GetterHeaders:  d.strMap(attrs, blocks, "headers", path+".GetterHeaders", "artifact.headers"),
		GetterMode:     d.str(attrs["mode"], path+".GetterMode", "artifact.mode"),
		GetterInsecure: d.bool(attrs["insecure"], path+".GetterInsecure", "artifact.insecure"),
		RelativeDest:   d.str(attrs["destination"], path+".RelativeDest", "artifact.destination"),
	}
	if v := d.bool(attrs["chown"], path+".Chown", "artifact.chown"); v != nil {
		a.Chown = *v
	}
	return a
}

func (d *decoder) parameterized(b *hclsyntax.Block, path string) *specParameterized {
	d.lc.set(path, d.at(b.TypeRange, "parameterized"))
	attrs, _ := d.content(b.Body, "parameterized")
	p := &specParameterized{
		MetaRequired: d.strs(attrs["meta_required"], path+".MetaRequired", "parameterized.meta_required"),
		MetaOptional: d.strs(attrs["meta_optional"], path+".MetaOptional", "parameterized.meta_optional"),
	}
	if s := d.str(attrs["payload"], path+".Payload", "parameterized.payload"); s != nil {
		p.Payload = *s
	}
	return p
}

// scaling decodes a group's scaling block; its policy block is kept as
// written, free-form, for an external autoscaler.
func (d *decoder) scaling(b *hclsyntax.Block, path string) *specScaling {
	d.lc.set(path, d.at(b.TypeRange, "scaling"))
	attrs, blocks := d.content(b.Body, "scaling")
	s := &specScaling{Enabled: d.bool(attrs["enabled"], path+".Enabled", "scaling.enabled")}
	if v := d.int(attrs["min"], path+".Min", "scaling.min"); v != nil {
		m := int64(*v)
		s.Min = &m
	}
	if v := d.int(attrs["max"], path+".Max", "scaling.max"); v != nil {
		m := int64(*v)
		s.Max = &m
	}
	if v := d.str(attrs["type"], path+".Type", "scaling.type"); v != nil {
		s.Type = *v
	}
	if a := attrs["policy"]; a != nil {
		d.record(a, path+".Policy", "scaling.policy")
		if v, ok := d.value(a, "scaling.policy", cty.DynamicPseudoType); ok {
			x, err := anyValue(v)
			if m, isMap := x.(map[string]any); err != nil || !isMap {
				d.r.errorf(d.at(a.Expr.Range(), "scaling.policy"), "scaling.policy must be an object")
			} else {
				s.Policy = m
			}
		}
	} else if bs := blocks["policy"]; len(bs) > 0 {
		d.lc.set(path+".Policy", d.at(bs[0].TypeRange, "scaling.policy"))
		s.Policy = d.freeform(bs[0].Body, "scaling.policy", path+".Policy")
	}
	return s
}

func (d *decoder) resources(b *hclsyntax.Block, path string) *specResources {
	d.lc.set(path, d.at(b.TypeRange, "resources"))
	attrs, _ := d.content(b.Body, "resources")
	return &specResources{
		CPU:         d.int(attrs["cpu"], path+".CPU", "resources.cpu"),
		Cores:       d.int(attrs["cores"], path+".Cores", "resources.cores"),
		MemoryMB:    d.int(attrs["memory"], path+".MemoryMB", "resources.memory"),
		MemoryMaxMB: d.int(attrs["memory_max"], path+".MemoryMaxMB", "resources.memory_max"),
	}
}

func (d *decoder) logs(b *hclsyntax.Block, path string) *specLogs {
	d.lc.set(path, d.at(b.TypeRange, "logs"))
	attrs, _ := d.content(b.Body, "logs")
	return &specLogs{
		MaxFiles:      d.int(attrs["max_files"], path+".MaxFiles", "logs.max_files"),
		MaxFileSizeMB: d.int(attrs["max_file_size"], path+".MaxFileSizeMB", "logs.max_file_size"),
		Enabled:       d.bool(attrs["enabled"], path+".Enabled", "logs.enabled"),
		Disabled:      d.bool(attrs["disabled"], path+".Disabled", "logs.disabled"),
	}
}

func (d *decoder) ephemeralDisk(b *hclsyntax.Block, path string) *specEphemeralDisk {
	d.lc.set(path, d.at(b.TypeRange, "ephemeral_disk"))
	attrs, _ := d.content(b.Body, "ephemeral_disk")
	return &specEphemeralDisk{
		Sticky:  d.bool(attrs["sticky"], path+".Sticky", "ephemeral_disk.sticky"),
		Migrate: d.bool(attrs["migrate"], path+".Migrate", "ephemeral_disk.migrate"),
		SizeMB:  d.int(attrs["size"], path+".SizeMB", "ephemeral_disk.size"),
	}
}

func (d *decoder) restart(b *hclsyntax.Block, path string) *specRestart {
	d.lc.set(path, d.at(b.TypeRange, "restart"))
	attrs, _ := d.content(b.Body, "restart")
	return &specRestart{
		Attempts: d.int(attrs["attempts"], path+".Attempts", "restart.attempts"),
		Interval: d.dur(attrs["interval"], path+".Interval", "restart.interval"),
		Delay:    d.dur(attrs["delay"], path+".Delay", "restart.delay"),
		Mode:     d.str(attrs["mode"], path+".Mode", "restart.mode"),
	}
}

func (d *decoder) disconnect(b *hclsyntax.Block, path string) *specDisconnect {
	d.lc.set(path, d.at(b.TypeRange, "disconnect"))
	attrs, _ := d.content(b.Body, "disconnect")
	return &specDisconnect{
		LostAfter:         d.dur(attrs["lost_after"], path+".LostAfter", "disconnect.lost_after"),
		StopOnClientAfter: d.dur(attrs["stop_on_client_after"], path+".StopOnClientAfter", "disconnect.stop_on_client_after"),
		Replace:           d.bool(attrs["replace"], path+".Replace", "disconnect.replace"),
		Reconcile:         d.str(attrs["reconcile"], path+".Reconcile", "disconnect.reconcile"),
	}
}

func (d *decoder) reschedule(b *hclsyntax.Block, path string) *specReschedule {
	d.lc.set(path, d.at(b.TypeRange, "reschedule"))
	attrs, _ := d.content(b.Body, "reschedule")
	return &specReschedule{
		Attempts:      d.int(attrs["attempts"], path+".Attempts", "reschedule.attempts"),
		Interval:      d.dur(attrs["interval"], path+".Interval", "reschedule.interval"),
		Delay:         d.dur(attrs["delay"], path+".Delay", "reschedule.delay"),
		DelayFunction: d.str(attrs["delay_function"], path+".DelayFunction", "reschedule.delay_function"),
		MaxDelay:      d.dur(attrs["max_delay"], path+".MaxDelay", "reschedule.max_delay"),
		Unlimited:     d.bool(attrs["unlimited"], path+".Unlimited", "reschedule.unlimited"),
	}
}

func (d *decoder) migrate(b *hclsyntax.Block, path string) *specMigrate {
	d.lc.set(path, d.at(b.TypeRange, "migrate"))
	attrs, _ := d.content(b.Body, "migrate")
	return &specMigrate{
		MaxParallel:     d.int(attrs["max_parallel"], path+".MaxParallel", "migrate.max_parallel"),
		HealthCheck:     d.str(attrs["health_check"], path+".HealthCheck", "migrate.health_check"),
		MinHealthyTime:  d.dur(attrs["min_healthy_time"], path+".MinHealthyTime", "migrate.min_healthy_time"),
		HealthyDeadline: d.dur(attrs["healthy_deadline"], path+".HealthyDeadline", "migrate.healthy_deadline"),
	}
}

func (d *decoder) periodic(b *hclsyntax.Block, path string) *specPeriodic {
	d.lc.set(path, d.at(b.TypeRange, "periodic"))
	attrs, _ := d.content(b.Body, "periodic")
	return &specPeriodic{
		Enabled:         d.bool(attrs["enabled"], path+".Enabled", "periodic.enabled"),
		Spec:            d.str(attrs["cron"], path+".Spec", "periodic.cron"),
		Specs:           d.strs(attrs["crons"], path+".Specs", "periodic.crons"),
		ProhibitOverlap: d.bool(attrs["prohibit_overlap"], path+".ProhibitOverlap", "periodic.prohibit_overlap"),
		TimeZone:        d.str(attrs["time_zone"], path+".TimeZone", "periodic.time_zone"),
	}
}

// shorthand constraint attributes: regexp = "x" means operator "regexp".
// distinct_property = "${meta.rack}" names the property (the attribute).
var shorthands = []string{"distinct_hosts", "distinct_property", "regexp", "version", "semver", "set_contains", "set_contains_all", "set_contains_any"}

func (d *decoder) constraints(bs []*hclsyntax.Block, path string) []*specConstraint {
	var out []*specConstraint
	for i, b := range bs {
		cpath := fmt.Sprintf("%s[%d]", path, i)
		d.lc.set(cpath, d.at(b.TypeRange, "constraint"))
		attrs, _ := d.content(b.Body, "constraint")
		c := &specConstraint{}
		if s := d.str(attrs["attribute"], cpath+".LTarget", "constraint.attribute"); s != nil {
			c.LTarget = *s
		}
		if s := d.str(attrs["value"], cpath+".RTarget", "constraint.value"); s != nil {
			c.RTarget = *s
		}
		if s := d.str(attrs["operator"], cpath+".Operand", "constraint.operator"); s != nil {
			c.Operand = *s
		}
		for _, op := range shorthands {
			a := attrs[op]
			if a == nil {
				continue
			}
			if c.Operand != "" {
				d.r.errorf(d.at(a.SrcRange, "constraint."+op), "constraint.%s cannot be combined with operator %q", op, c.Operand)
				continue
			}
			c.Operand = op
			if op == "distinct_hosts" {
				if v := d.bool(a, cpath+".Operand", "constraint."+op); v != nil && !*v {
					c.Operand = ""
					continue
				}
			} else if op == "distinct_property" {
				if s := d.str(a, cpath+".LTarget", "constraint."+op); s != nil {
					c.LTarget = *s
				}
			} else if s := d.str(a, cpath+".RTarget", "constraint."+op); s != nil {
				c.RTarget = *s
			}
		}
		out = append(out, c)
	}
	return out
}

// affinities decodes affinity blocks. A weight outside the range of
// Nomad's int8 field is an error here; the builder checks the rest.
func (d *decoder) affinities(bs []*hclsyntax.Block, path string) []*specAffinity {
	var out []*specAffinity
	for i, b := range bs {
		apath := fmt.Sprintf("%s[%d]", path, i)
		d.lc.set(apath, d.at(b.TypeRange, "affinity"))
		attrs, _ := d.content(b.Body, "affinity")
		a := &specAffinity{}
		if s := d.str(attrs["attribute"], apath+".LTarget", "affinity.attribute"); s != nil {
			a.LTarget = *s
		}
		if s := d.str(attrs["value"], apath+".RTarget", "affinity.value"); s != nil {
			a.RTarget = *s
		}
		if s := d.str(attrs["operator"], apath+".Operand", "affinity.operator"); s != nil {
			a.Operand = *s
		}
		if w := d.int(attrs["weight"], apath+".Weight", "affinity.weight"); w != nil {
			if *w < -100 || *w > 100 {
				d.r.errorf(d.at(attrs["weight"].SrcRange, "affinity.weight"), "affinity.weight must be between -100 and 100 (got %d)", *w)
				d.lc.bad[apath+".Weight"] = true
			} else {
				w8 := int8(*w)
				a.Weight = &w8
			}
		}
		out = append(out, a)
	}
	return out
}

func (d *decoder) spreads(bs []*hclsyntax.Block, path string) []*specSpread {
	var out []*specSpread
	for i, b := range bs {
		spath := fmt.Sprintf("%s[%d]", path, i)
		d.lc.set(spath, d.at(b.TypeRange, "spread"))
		attrs, blocks := d.content(b.Body, "spread")
		s := &specSpread{}
		if v := d.str(attrs["attribute"], spath+".Attribute", "spread.attribute"); v != nil {
			s.Attribute = *v
		}
		if w := d.int(attrs["weight"], spath+".Weight", "spread.weight"); w != nil {
			if *w < 0 || *w > 100 {
				d.r.errorf(d.at(attrs["weight"].SrcRange, "spread.weight"), "spread.weight must be between 0 and 100 (got %d)", *w)
			} else {
				w8 := int8(*w)
				s.Weight = &w8
			}
		}
		for j, tb := range blocks["target"] {
			tpath := fmt.Sprintf("%s.SpreadTarget[%d]", spath, j)
			d.lc.set(tpath, d.at(tb.TypeRange, "target"))
			d.lc.set(tpath+".Value", d.at(tb.LabelRanges[0], "target"))
			tattrs, _ := d.content(tb.Body, "target")
			t := &specSpreadTarget{Value: tb.Labels[0]}
			if p := d.int(tattrs["percent"], tpath+".Percent", "target.percent"); p != nil {
				if *p < 0 || *p > 100 {
					d.r.errorf(d.at(tattrs["percent"].SrcRange, "target.percent"), "target.percent must be between 0 and 100 (got %d)", *p)
				} else {
					t.Percent = uint8(*p)
				}
			}
			s.SpreadTarget = append(s.SpreadTarget, t)
		}
		out = append(out, s)
	}
	return out
}

func (d *decoder) volume(b *hclsyntax.Block, path string) *specVolume {
	d.lc.set(path, d.at(b.TypeRange, "volume"))
	d.lc.set(path+".Name", d.at(b.LabelRanges[0], "volume"))
	attrs, _ := d.content(b.Body, "volume")
	v := &specVolume{Name: b.Labels[0]}
	if s := d.str(attrs["type"], path+".Type", "volume.type"); s != nil {
		v.Type = *s
	}
	if s := d.str(attrs["source"], path+".Source", "volume.source"); s != nil {
		v.Source = *s
	}
	if x := d.bool(attrs["read_only"], path+".ReadOnly", "volume.read_only"); x != nil {
		v.ReadOnly = *x
	}
	if x := d.bool(attrs["per_alloc"], path+".PerAlloc", "volume.per_alloc"); x != nil {
		v.PerAlloc = *x
	}
	return v
}
