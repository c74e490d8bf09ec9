package jobspec

import (
	"encoding/json"
	"os"
	"testing"
)

// FuzzParse: no job file panics, and a successful parse round-trips
// through ParseAPIJob.
func FuzzParse(f *testing.F) {
	for _, file := range jobFiles(f) {
		if src, err := os.ReadFile(file); err == nil {
			f.Add(src)
		}
	}
	f.Add([]byte(`{"Job":{"ID":"x","TaskGroups":[{"Name":"a","Tasks":[{"Name":"t","Driver":"mock"}]}]}}`))
	f.Add([]byte("job \"x\" {\n  group \"g\" {\n    task \"t\" { driver = \"${NOMAD_X}\" }\n  }\n}"))
	// Affinities at every level, good and bad (weights out of range, 0,
	// operators of constraints only, a system job).
	f.Add([]byte("job \"x\" {\n  affinity {\n    attribute = \"${meta.rack}\"\n    value = \"r1\"\n    weight = -100\n  }\n" +
		"  group \"g\" {\n    affinity {\n      attribute = \"${node.class}\"\n      operator = \"set_contains_any\"\n      value = \"a,b\"\n    }\n" +
		"    task \"t\" {\n      driver = \"mock\"\n      affinity {\n        attribute = \"${attr.kernel.version}\"\n        operator = \"semver\"\n" +
		"        value = \">= 1.0\"\n        weight = 100\n      }\n    }\n  }\n}"))
	f.Add([]byte("job \"x\" {\n  type = \"system\"\n  affinity {\n    weight = 0\n    operator = \"is_set\"\n  }\n" +
		"  group \"g\" {\n    affinity {\n      attribute = \"\"\n      operator = \"regexp\"\n      value = \"(\"\n      weight = 128\n    }\n" +
		"    task \"t\" { driver = \"mock\" }\n  }\n}"))
	// Functions: Nomad's HCL2 functions, good calls and bad ones
	// (filesystem functions are disabled here, as on the agent).
	f.Add([]byte("locals {\n  a = cidrsubnets(\"10.0.0.0/16\", 4, 8)\n  b = yamldecode(yamlencode({x = [1, \"y\"]}))\n" +
		"  c = base64decode(base64encode(jsonencode(local.b)))\n  d = [uuidv5(\"dns\", \"a\"), sha256(\"x\"), md5(\"\"), urlencode(\"a b\")]\n" +
		"  e = [formatdate(\"YYYY\", timeadd(\"2020-01-01T00:00:00Z\", \"1h\")), index([1, 2], 2), tolist(toset([\"a\"]))]\n}\n" +
		"job \"x\" {\n  meta {\n    a = local.a[1]\n    c = local.c\n    d = join(\",\", local.d)\n    f = file(\"/etc/passwd\")\n  }\n" +
		"  group \"g\" {\n    task \"t\" { driver = \"mock\" }\n  }\n}"))
	f.Add([]byte("job \"x\" {\n  meta {\n    a = cidrhost(\"10.0.0.0/8\", -1)\n    b = yamldecode(\"[\")\n    c = rsadecrypt(\"x\", \"y\")\n" +
		"    d = convert(1, list(string))\n    e = index(\"ab\", \"a\")\n    f = uuidv5(\"x\", \"\")\n  }\n" +
		"  group \"g\" {\n    task \"t\" { driver = \"mock\" }\n  }\n}"))
	// The rollout policies: counts, percentages, lists of both, the edges.
	f.Add([]byte("job \"x\" {\n  update {\n    max_parallel = \"25%\"\n    max_surge = \"100%\"\n    first_batch = 1\n    unhealthy_first = true\n" +
		"    max_unhealthy = \"0%\"\n    max_failed = 2\n    on_failure = \"pause\"\n    checkpoints = [1, \"50%\", \"100%\"]\n    checkpoint_delay = \"1m\"\n  }\n" +
		"  group \"g\" {\n    count = 3\n    update {\n      max_parallel = \"0%\"\n      checkpoints = []\n      checkpoint_delay = \"0s\"\n    }\n" +
		"    task \"t\" { driver = \"mock\" }\n  }\n}"))
	f.Add([]byte("job \"x\" {\n  type = \"system\"\n  update {\n    max_surge = \"-0%\"\n    max_parallel = \"5\"\n    on_failure = \"\"\n    checkpoints = [\"2\", 3]\n  }\n" +
		"  group \"g\" {\n    task \"t\" { driver = \"mock\" }\n  }\n}"))
	// Zones: a job-level block, a group's partial one over it, the edges.
	f.Add([]byte("job \"x\" {\n  update {\n    zones {\n      attribute = \"${meta.zone}/${attr.fd}\"\n      mode = \"zone_by_zone\"\n" +
		"      order = [\"b\", \"a\"]\n      disruption_budget = \"25%\"\n      pause_between_zones = \"1m\"\n      success_threshold = 1\n    }\n  }\n" +
		"  group \"g\" {\n    count = 6\n    update {\n      zones {\n        order = \"fewest_first\"\n        mode = \"concurrent\"\n" +
		"        pause_between_zones = \"0s\"\n      }\n    }\n    task \"t\" { driver = \"mock\" }\n  }\n}"))
	f.Add([]byte("job \"x\" {\n  update {\n    zones {\n      attribute = \"$${node.\"\n      order = [\"\", \"\", 1]\n      disruption_budget = \"0%\"\n" +
		"      success_threshold = \"100%\"\n    }\n    zones {}\n  }\n  group \"g\" {\n    update {\n      zones {}\n    }\n" +
		"    task \"t\" { driver = \"mock\" }\n  }\n}"))
	// Groups one at a time: a partial order and a pause, then the edges
	// (a group's block, names twice or of no group, a negative pause).
	f.Add([]byte("job \"x\" {\n  update {\n    group_order = [\"b\", \"a\"]\n    pause_between_groups = \"30s\"\n  }\n" +
		"  group \"a\" {\n    task \"t\" { driver = \"mock\" }\n  }\n  group \"b\" {\n    task \"t\" { driver = \"mock\" }\n  }\n" +
		"  group \"c\" {\n    update {\n      canary = 1\n    }\n    task \"t\" { driver = \"mock\" }\n  }\n}"))
	f.Add([]byte("job \"x\" {\n  update {\n    group_order = [\"a\", \"a\", \"\", 1, [\"b\"]]\n    pause_between_groups = \"-1s\"\n  }\n" +
		"  group \"a\" {\n    update {\n      group_order = []\n      pause_between_groups = \"0s\"\n    }\n" +
		"    task \"t\" { driver = \"mock\" }\n  }\n}"))
	// disconnect: the block, the older fields, both at once, bad values.
	f.Add([]byte("job \"x\" {\n  group \"g\" {\n    disconnect {\n      lost_after = \"1h\"\n      replace = false\n      reconcile = \"keep_original\"\n    }\n" +
		"    task \"t\" { driver = \"mock\" }\n  }\n}"))
	f.Add([]byte("job \"x\" {\n  group \"g\" {\n    max_client_disconnect = \"1h\"\n    stop_after_client_disconnect = \"-1s\"\n" +
		"    disconnect {\n      stop_on_client_after = \"1h\"\n      reconcile = \"x\"\n    }\n    task \"t\" { driver = \"mock\" }\n  }\n}"))
	// max_run_duration: a batch job's, and a service job's (refused).
	f.Add([]byte("job \"x\" {\n  type = \"batch\"\n  group \"g\" {\n    max_run_duration = \"1h\"\n    task \"t\" { driver = \"mock\" }\n  }\n}"))
	// The migrate block: job and group, good and bad, on a job type that
	// may not have one.
	f.Add([]byte("job \"x\" {\n  migrate {\n    max_parallel = 2\n    health_check = \"task_states\"\n  }\n" +
		"  group \"g\" {\n    migrate {\n      min_healthy_time = \"-1s\"\n      healthy_deadline = 0\n      max_parallel = -3\n    }\n" +
		"    task \"t\" { driver = \"mock\" }\n  }\n}"))
	f.Add([]byte("job \"x\" {\n  type = \"system\"\n  migrate {\n    health_check = \"manual\"\n  }\n  group \"g\" {\n" +
		"    migrate { max_parallel = \"1\" }\n    task \"t\" { driver = \"mock\" }\n  }\n}"))
	// The multiregion block (multiregion.go): good and bad, HCL and JSON.
	f.Add([]byte("job \"x\" {\n  multiregion {\n    strategy {\n      max_parallel = -1\n      on_failure = \"fail_all\"\n    }\n" +
		"    region \"east\" {\n      count = 2\n      datacenters = [\"e1\", \"\"]\n      meta { a = \"b\" }\n    }\n    region \"east\" {}\n    region \"\" {}\n  }\n" +
		"  group \"g\" {\n    task \"t\" { driver = \"mock\" }\n  }\n}"))
	f.Add([]byte(`{"Job":{"ID":"x","Multiregion":{"Strategy":{"MaxParallel":1,"OnFailure":"x"},"Regions":[{"Name":"w","Count":null,"Meta":{"a":1}},null]},"TaskGroups":[{"Name":"a","Tasks":[{"Name":"t","Driver":"mock"}]}]}}`))
	f.Add([]byte(`{"Job":{"ID":"x","Migrate":{"MaxParallel":null,"HealthCheck":1},"TaskGroups":[{"Name":"a","Migrate":{"MinHealthyTime":-5},"Tasks":[{"Name":"t","Driver":"mock"}]}]}}`))
	f.Add([]byte("job \"x\" {\n  group \"g\" {\n    max_run_duration = \"-1s\"\n    task \"t\" { driver = \"mock\" }\n  }\n}"))
	// check_restart on a service and its checks; a script check.
	f.Add([]byte("job \"x\" {\n  group \"g\" {\n    service {\n      check_restart {\n        limit = 2\n        grace = \"5s\"\n      }\n" +
		"      check {\n        type = \"script\"\n        task = \"t\"\n        command = \"/bin/true\"\n        args = [\"a\", 1]\n" +
		"        interval = \"1s\"\n        timeout = \"1s\"\n        check_restart {\n          limit = -1\n          ignore_warnings = true\n        }\n      }\n    }\n" +
		"    task \"t\" { driver = \"mock\" }\n  }\n}"))
	// Docker tasks: a bridge group, every config key, then the edges
	// (unknown and refused keys, bad volumes and mounts, odd types).
	f.Add([]byte("job \"x\" {\n  group \"g\" {\n    network {\n      mode = \"bridge\"\n      port \"http\" { to = 80 }\n    }\n" +
		"    task \"t\" {\n      driver = \"docker\"\n      config {\n        image = \"web:1\"\n        command = \"/bin/sh\"\n        args = [\"-c\", \"x\"]\n" +
		"        entrypoint = [\"/init\"]\n        ports = [\"http\"]\n        network_mode = \"bridge\"\n        labels { a = \"b\" }\n" +
		"        volumes = [\"data:/data:ro\", \"../alloc/x:/x\"]\n        mount {\n          type = \"tmpfs\"\n          target = \"/t\"\n" +
		"          tmpfs_options {\n            size = 1024\n            mode = 493\n          }\n        }\n        force_pull = true\n" +
		"        work_dir = \"/w\"\n        hostname = \"h\"\n        init = true\n        readonly_rootfs = true\n        image_pull_timeout = \"1m\"\n" +
		"      }\n    }\n  }\n}"))
	f.Add([]byte("job \"x\" {\n  group \"g\" {\n    network {\n      mode = \"bridge\"\n    }\n    task \"t\" {\n      driver = \"docker\"\n" +
		"      config {\n        image = [1]\n        ports = [\"nope\", 2, \"nope\"]\n        volumes = [\"/:/\", \"a:b:c:d\", \"../../x:/local\"]\n" +
		"        mount {\n          type = \"bind\"\n          bind_options { propagation = \"rshared\" }\n        }\n        mount = 3\n" +
		"        labels = { \"com.droverhq.drover.x\" = 1 }\n        privileged = true\n        imag = \"x\"\n        image_pull_timeout = -5\n" +
		"        network_mode = \"container:a\"\n      }\n    }\n    task \"u\" {\n      driver = \"raw_exec\"\n    }\n  }\n}"))
	f.Fuzz(func(t *testing.T, src []byte) {
		job, _, err := Parse("fuzz.hcl", src, Options{})
		if err != nil {
			if _, ok := err.(*Errors); !ok {
				t.Fatalf("error is %T, not *Errors: %v", err, err)
			}
			return
		}
		data, err := json.Marshal(job)
		if err != nil {
			t.Fatalf("marshal: %v", err)
		}
		if _, _, err := ParseAPIJob(data); err != nil {
			t.Fatalf("a parsed job does not parse back: %v\n%s", err, data)
		}
	})
}

// FuzzParseAPIJob: no API job panics.
func FuzzParseAPIJob(f *testing.F) {
	for _, file := range jobFiles(f) {
		src, err := os.ReadFile(file)
		if err != nil {
			continue
		}
		if job, _, err := Parse(file, src, Options{}); err == nil {
			data, _ := json.Marshal(job)
			f.Add(data)
		}
	}
	f.Add([]byte(`{"ID":"x","TaskGroups":[{"Name":"a","Volumes":{"d":{}},"Tasks":[{"Name":"t","Driver":"mock","Config":{"a":[1,2.5,{"b":null}]}}]}]}`))
	f.Add([]byte(`[]`))
	// The rollout policies: counts, percentages, lists of both, the edges.
	f.Add([]byte(`{"ID":"x","Update":{"MaxParallelPercent":25,"MaxSurge":"25%","FirstBatch":1,"UnhealthyFirst":true,"MaxUnhealthy":"10%",` +
		`"MaxFailed":2,"OnFailure":"pause","Checkpoints":["25%",3],"CheckpointDelay":60000000000},` +
		`"TaskGroups":[{"Name":"a","Count":8,"Update":{"MaxParallel":7,"MaxParallelPercent":0,"Checkpoints":[]},"Tasks":[{"Name":"t","Driver":"mock"}]}]}`))
	f.Add([]byte(`{"ID":"x","Type":"system","Update":{"MaxSurge":"-0%","FirstBatch":"2147483648","MaxFailed":1e3,"Checkpoints":[null,"x%",true]},` +
		`"RevertOf":2,"TaskGroups":[{"Name":"a","Tasks":[{"Name":"t","Driver":"mock"}]}]}`))
	// Zones: a job-level block, a group's partial one over it, the edges.
	f.Add([]byte(`{"ID":"x","Update":{"Zones":{"Attribute":"${node.meta.zone}","Mode":"concurrent","Order":["b","a"],"DisruptionBudget":"25%",` +
		`"PauseBetweenZones":0,"SuccessThreshold":null}},"TaskGroups":[{"Name":"a","Count":6,"Update":{"Zones":{"Order":[],"Mode":"zone_by_zone",` +
		`"PauseBetweenZones":60000000000,"SuccessThreshold":"80%"}},"Tasks":[{"Name":"t","Driver":"mock"}]}]}`))
	f.Add([]byte(`{"ID":"x","Update":{"Zones":{"Attribute":"${","Order":[null,1,"a","a"],"DisruptionBudget":"-0%","SuccessThreshold":0,"X":1}},` +
		`"TaskGroups":[{"Name":"a","Update":{"Zones":[]},"Tasks":[{"Name":"t","Driver":"mock"}]}]}`))
	// Affinities: defaults, every level, the edges of Weight.
	f.Add([]byte(`{"ID":"x","Affinities":[{"LTarget":"${meta.a}","RTarget":"b","Operand":"","Weight":null},null],"TaskGroups":[` +
		`{"Name":"a","Affinities":[{"LTarget":"x","RTarget":"(","Operand":"regexp","Weight":-128}],"Tasks":[{"Name":"t","Driver":"mock",` +
		`"Affinities":[{"Weight":127},{"Weight":"50"},{"Weight":1e2}]}]}]}`))
	// Groups one at a time: a partial order and a pause, then the edges.
	f.Add([]byte(`{"ID":"x","Update":{"GroupOrder":["b","a"],"PauseBetweenGroups":30000000000},"TaskGroups":[` +
		`{"Name":"a","Tasks":[{"Name":"t","Driver":"mock"}]},{"Name":"b","Update":{"GroupOrder":null},"Tasks":[{"Name":"t","Driver":"mock"}]},` +
		`{"Name":"c","Tasks":[{"Name":"t","Driver":"mock"}]}]}`))
	f.Add([]byte(`{"ID":"x","Update":{"GroupOrder":["a","a",null,1,""],"PauseBetweenGroups":-1},"TaskGroups":[` +
		`{"Name":"a","Update":{"GroupOrder":[],"PauseBetweenGroups":"1s"},"Tasks":[{"Name":"t","Driver":"mock"}]}]}`))
	// disconnect: the block, the older fields, both at once, bad values.
	f.Add([]byte(`{"ID":"x","TaskGroups":[{"Name":"a","Disconnect":{"LostAfter":3600000000000,"StopOnClientAfter":null,"Replace":true,"Reconcile":"best_score"},` +
		`"Tasks":[{"Name":"t","Driver":"mock"}]}]}`))
	f.Add([]byte(`{"ID":"x","TaskGroups":[{"Name":"a","MaxClientDisconnect":-1,"StopAfterClientDisconnect":5,"Disconnect":{"Reconcile":7},` +
		`"Tasks":[{"Name":"t","Driver":"mock"}]}]}`))
	// max_run_duration: a batch job's, a negative one.
	f.Add([]byte(`{"ID":"x","Type":"batch","TaskGroups":[{"Name":"a","MaxRunDuration":3600000000000,"Tasks":[{"Name":"t","Driver":"mock"}]}]}`))
	f.Add([]byte(`{"ID":"x","Type":"batch","TaskGroups":[{"Name":"a","MaxRunDuration":-1,"Tasks":[{"Name":"t","Driver":"mock"}]}]}`))
	// check_restart on a service and its checks; a script check.
	f.Add([]byte(`{"ID":"x","TaskGroups":[{"Name":"a","Services":[{"Name":"s","CheckRestart":{"Limit":2,"Grace":null},` +
		`"Checks":[{"Type":"script","TaskName":"t","Command":"x","Args":["a",null],"Interval":1,"Timeout":1,` +
		`"CheckRestart":{"Limit":-1,"Grace":-5,"IgnoreWarnings":true}}]}],"Tasks":[{"Name":"t","Driver":"mock"}]}]}`))
	// Docker tasks: a good config, then the edges.
	f.Add([]byte(`{"ID":"x","TaskGroups":[{"Name":"a","Networks":[{"Mode":"bridge","DynamicPorts":[{"Label":"http","To":80}]}],` +
		`"Tasks":[{"Name":"t","Driver":"docker","Config":{"image":"web:1","ports":["http"],"labels":[{"a":"b"}],` +
		`"mount":[{"type":"volume","target":"/v"}],"volumes":["d:/d"],"image_pull_timeout":60000000000}}]}]}`))
	f.Add([]byte(`{"ID":"x","TaskGroups":[{"Name":"a","Networks":[{"Mode":"bridge"}],"Tasks":[{"Name":"t","Driver":"docker",` +
		`"Config":{"image":null,"ports":{"a":1},"labels":"x","mount":[1,{"tmpfs_options":[{"size":1.5,"mode":-1}],"type":"tmpfs","source":"s"}],` +
		`"volumes":[null],"image_pull_timeout":1e300,"force_pull":"yes"}},{"Name":"u","Driver":"mock"}]}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		job, _, err := ParseAPIJob(data)
		if err != nil {
			if _, ok := err.(*Errors); !ok {
				t.Fatalf("error is %T, not *Errors: %v", err, err)
			}
			return
		}
		if job == nil {
			t.Fatal("nil job without error")
		}
	})
}
