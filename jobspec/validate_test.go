package jobspec

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// jobWith wraps group and job-level lines into a job file. The job block
// starts on line 1; group body lines start on line 4.
func jobWith(jobLines, groupLines string) string {
	return fmt.Sprintf("job \"j\" {\n%s\n  group \"g\" {\n%s\n    task \"t\" {\n      driver = \"mock\"\n    }\n  }\n}\n", jobLines, groupLines)
}

// rule is one validation case: the diagnostic expected on line (1-based)
// of src, naming field, its message containing msg.
type rule struct {
	name  string
	src   string
	field string
	line  int
	msg   string
	warn  bool
}

func rules() []rule {
	return []rule{
		{"negative max_parallel", jobWith("  update {\n    max_parallel = -1\n  }", ""), "update.max_parallel", 3, "update.max_parallel must not be negative (got -1)", false},
		{"host network other than default", jobWith("", "    network {\n      port \"http\" {\n        host_network = \"public\"\n      }\n    }"), "port.http.host_network", 6, `"public" is not supported by drover (clients have only the "default" host network)`, false},
		{"negative canary", jobWith("", "    update {\n      canary = -2\n    }"), "update.canary", 5, "update.canary must not be negative (got -2)", false},
		{"unknown health_check", jobWith("  update {\n    health_check = \"tcp\"\n  }", ""), "update.health_check", 3, `must be checks, task_states or manual (got "tcp")`, false},
		{"negative min_healthy_time", jobWith("  update {\n    min_healthy_time = \"-1s\"\n  }", ""), "update.min_healthy_time", 3, "update.min_healthy_time must not be negative (got -1s)", false},
		{"negative progress_deadline", jobWith("  update {\n    progress_deadline = \"-1s\"\n  }", ""), "update.progress_deadline", 3, "update.progress_deadline must not be negative (got -1s)", false},
		{"zero healthy_deadline", jobWith("  update {\n    healthy_deadline = \"0s\"\n  }", ""), "update.healthy_deadline", 3, "update.healthy_deadline must be positive (got 0s)", false},
		{"zero stagger", jobWith("  update {\n    stagger = \"0s\"\n  }", ""), "update.stagger", 3, "update.stagger must be positive (got 0s)", false},
		{"auto_promote without canary", jobWith("  update {\n    auto_promote = true\n  }", ""), "update.auto_promote", 3, "update.auto_promote needs canary > 0", false},
		{"min_healthy_time >= healthy_deadline", jobWith("  update {\n    min_healthy_time = \"5m\"\n  }", ""), "update.min_healthy_time", 3, "must be less than healthy_deadline (5m0s >= 5m0s)", false},
		{"healthy_deadline >= progress_deadline", jobWith("  update {\n    healthy_deadline = \"10m\"\n  }", ""), "update.healthy_deadline", 3, "must be less than progress_deadline (10m0s >= 10m0s)", false},
		{"canary with max_parallel 0", jobWith("  update {\n    max_parallel = 0\n    canary = 1\n  }", ""), "update.canary", 4, "update.canary needs max_parallel > 0", false},
		{"update on batch job", jobWith("  type = \"batch\"\n  update {\n    max_parallel = 1\n  }", ""), "update", 3, "update is not allowed for batch jobs", false},
		{"group update on batch job", jobWith("  type = \"batch\"", "    update {\n      max_parallel = 1\n    }"), "update", 4, "update is not allowed for batch jobs", false},
		{"max_parallel > count", jobWith("", "    count = 2\n    update {\n      max_parallel = 3\n    }"), "update.max_parallel", 6, `update.max_parallel is greater than the count of group "g" (3 > 2)`, true},
		{"duplicate group", "job \"j\" {\n  group \"g\" {\n    task \"t\" {\n      driver = \"mock\"\n    }\n  }\n  group \"g\" {\n    task \"t\" {\n      driver = \"mock\"\n    }\n  }\n}\n", "group", 7, `group "g" is defined twice (first at line 2)`, false},
		{"duplicate task", "job \"j\" {\n  group \"g\" {\n    task \"t\" {\n      driver = \"mock\"\n    }\n    task \"t\" {\n      driver = \"mock\"\n    }\n  }\n}\n", "task", 6, `task "t" is defined twice in group "g"`, false},
		{"task without driver", "job \"j\" {\n  group \"g\" {\n    task \"t\" {\n    }\n  }\n}\n", "task.driver", 3, "task.driver is required", false},
		{"negative count", jobWith("", "    count = -1"), "group.count", 4, "group.count must not be negative (got -1)", false},
		{"group without tasks", "job \"j\" {\n  group \"g\" {\n  }\n}\n", "group", 2, `group "g" has no tasks`, false},
		{"bad job type", jobWith("  type = \"cron\"", ""), "job.type", 2, `job.type must be service, batch, system or sysbatch (got "cron")`, false},
		{"update on sysbatch job", jobWith("  type = \"sysbatch\"\n  update {\n    max_parallel = 1\n  }", ""), "update", 3, "update is not allowed for sysbatch jobs", false},
		{"group update on sysbatch job", jobWith("  type = \"sysbatch\"", "    update {\n      max_parallel = 1\n    }"), "update", 4, "update is not allowed for sysbatch jobs", false},
		{"reschedule on sysbatch job", jobWith("  type = \"sysbatch\"\n  reschedule {\n    attempts = 1\n  }", ""), "reschedule", 3, "reschedule is not allowed for sysbatch jobs", false},
		{"group reschedule on sysbatch job", jobWith("  type = \"sysbatch\"", "    reschedule {\n      attempts = 1\n    }"), "reschedule", 4, "reschedule is not allowed for sysbatch jobs", false},
		{"priority too low", jobWith("  priority = 0", ""), "job.priority", 2, "job.priority must be between 1 and 100 (got 0)", false},
		{"priority too high", jobWith("  priority = 101", ""), "job.priority", 2, "job.priority must be between 1 and 100 (got 101)", false},
		{"unknown attribute", jobWith("  update {\n    max_paralel = 1\n  }", ""), "update.max_paralel", 3, `unknown attribute "max_paralel" in update (did you mean max_parallel?)`, false},
		{"unknown block", jobWith("", "    updat {\n    }"), "group.updat", 4, `unknown block "updat" in group (did you mean update?)`, false},
		{"wrong type", jobWith("", "    count = \"many\""), "group.count", 4, "group.count must be number (got string)", false},
		{"bad duration", jobWith("  update {\n    stagger = \"10 s\"\n  }", ""), "update.stagger", 3, `update.stagger: invalid duration "10 s"`, false},
		{"duration as number", jobWith("  update {\n    stagger = 10\n  }", ""), "update.stagger", 3, `update.stagger must be a duration string`, false},
		{"check type", jobWith("", "    network {\n      port \"http\" {}\n    }\n    service {\n      port = \"http\"\n      check {\n        type = \"grpc\"\n        interval = \"1s\"\n        timeout = \"1s\"\n      }\n    }"), "check.type", 10, `check.type "grpc" is not supported by drover`, false},
		{"script check without command", jobWith("", "    service {\n      check {\n        type = \"script\"\n        task = \"t\"\n        interval = \"1s\"\n        timeout = \"1s\"\n      }\n    }"), "check.command", 5, "check.command is required for script checks", false},
		{"group script check without task", jobWith("", "    service {\n      check {\n        type = \"script\"\n        command = \"true\"\n        interval = \"1s\"\n        timeout = \"1s\"\n      }\n    }"), "check", 5, `check needs task = "NAME": a script check of a group service`, false},
		{"script check names no task", jobWith("", "    service {\n      check {\n        type = \"script\"\n        command = \"true\"\n        task = \"nope\"\n        interval = \"1s\"\n        timeout = \"1s\"\n      }\n    }"), "check.task", 8, `check.task names no task of group "g" (got "nope")`, false},
		{"command on a tcp check", jobWith("", "    network {\n      port \"http\" {}\n    }\n    service {\n      port = \"http\"\n      check {\n        type = \"tcp\"\n        command = \"true\"\n        interval = \"1s\"\n        timeout = \"1s\"\n      }\n    }"), "check.command", 11, `check.command is for script checks only (this check's type is "tcp")`, false},
		{"check_restart negative limit", jobWith("", "    network {\n      port \"http\" {}\n    }\n    service {\n      port = \"http\"\n      check_restart {\n        limit = -1\n      }\n    }"), "check_restart.limit", 10, "check_restart.limit must not be negative (got -1)", false},
		{"check_restart negative grace", jobWith("", "    network {\n      port \"http\" {}\n    }\n    service {\n      port = \"http\"\n      check {\n        type = \"tcp\"\n        interval = \"1s\"\n        timeout = \"1s\"\n        check_restart {\n          grace = \"-1s\"\n        }\n      }\n    }"), "check_restart.grace", 14, "check_restart.grace must not be negative (got -1s)", false},
		{"check_restart bad limit type", jobWith("", "    service {\n      check_restart {\n        limit = \"three\"\n      }\n    }"), "check_restart.limit", 6, "check_restart.limit must be number (got string)", false},
		{"check interval required", jobWith("", "    network {\n      port \"http\" {}\n    }\n    service {\n      port = \"http\"\n      check {\n        type = \"tcp\"\n        timeout = \"1s\"\n      }\n    }"), "check.interval", 9, "check.interval is required", false},
		{"service port undefined", jobWith("", "    network {\n      port \"http\" {}\n    }\n    service {\n      port = \"htp\"\n    }"), "service.port", 8, `service.port "htp" is not defined in the group network (did you mean http?)`, false},
		{"check port undefined", jobWith("", "    network {\n      port \"http\" {}\n    }\n    service {\n      port = \"http\"\n      check {\n        type = \"tcp\"\n        port = \"admin\"\n        interval = \"1s\"\n        timeout = \"1s\"\n      }\n    }"), "check.port", 11, `check.port "admin" is not defined in the group network`, false},
		{"static port out of range", jobWith("", "    network {\n      port \"http\" {\n        static = 70000\n      }\n    }"), "port.http.static", 6, "port.http.static must be between 1 and 65535 (got 70000)", false},
		{"duplicate port", jobWith("", "    network {\n      port \"a\" {}\n      port \"a\" {}\n    }"), "port", 6, `port "a" is defined twice`, false},
		{"empty datacenter", jobWith("  datacenters = [\"dc1\", \"\"]", ""), "job.datacenters", 2, "job.datacenters must not contain an empty name", false},
		{"restart delay times attempts", jobWith("", "    restart {\n      attempts = 3\n      delay = \"1m\"\n      interval = \"2m\"\n    }"), "restart.delay", 6, "restart.delay times 3 attempts exceeds the interval (3 × 1m0s > 2m0s)", false},
		{"two leaders", "job \"j\" {\n  group \"g\" {\n    task \"a\" {\n      driver = \"mock\"\n      leader = true\n    }\n    task \"b\" {\n      driver = \"mock\"\n      leader = true\n    }\n  }\n}\n", "task.leader", 9, "task.leader may be set on one task of a group only", false},
		{"unsupported attribute set to true", jobWith("  all_at_once = true", ""), "job.all_at_once", 2, "job.all_at_once is not supported by drover and is ignored", true},
		{"unsupported block", jobWith("", "    volume \"data\" {\n      type = \"host\"\n      source = \"d\"\n      mount_options { fs_type = \"ext4\" }\n    }"), "volume.mount_options", 7, "volume.mount_options is not supported by drover", false},
		{"unsupported attribute", jobWith("", "    prevent_reschedule_on_lost = true"), "group.prevent_reschedule_on_lost", 4, "group.prevent_reschedule_on_lost is not supported by drover", false},
		{"ignored block warns", jobWith("  ui {\n    description = \"x\"\n  }", ""), "job.ui", 2, "job.ui is not supported by drover and is ignored", true},
		{"required variable", "variable \"v\" {\n  type = string\n}\n" + jobWith("", ""), "variable", 1, `variable "v" is required`, false},
		{"variable validation", "variable \"v\" {\n  default = \"x\"\n  validation {\n    condition = strlen(var.v) > 3\n    error_message = \"too short\"\n  }\n}\n" + jobWith("", ""), "validation.condition", 4, `invalid value for variable "v": too short`, false},
		{"restart mode", jobWith("", "    restart {\n      mode = \"never\"\n    }"), "restart.mode", 5, `restart.mode must be fail or delay (got "never")`, false},
		{"reschedule delay_function", jobWith("", "    reschedule {\n      delay_function = \"linear\"\n    }"), "reschedule.delay_function", 5, `must be constant, exponential or fibonacci`, false},
		{"constraint operator", jobWith("  constraint {\n    attribute = \"${attr.kernel.name}\"\n    operator = \"~\"\n    value = \"linux\"\n  }", ""), "constraint.operator", 4, `unknown operator "~"`, false},
		{"driver not shipped", "job \"j\" {\n  group \"g\" {\n    task \"t\" {\n      driver = \"qemu\"\n    }\n  }\n}\n", "task.driver", 4, `task.driver "qemu" is not supported by drover (raw_exec, exec, java, docker or mock)`, false},
		{"exec without command", "job \"j\" {\n  group \"g\" {\n    task \"t\" {\n      driver = \"exec\"\n      config {\n        args = [\"x\"]\n      }\n    }\n  }\n}\n", "task.config.command", 5, `task.config.command is required`, false},
		{"exec bad pid_mode", "job \"j\" {\n  group \"g\" {\n    task \"t\" {\n      driver = \"exec\"\n      config {\n        command = \"/bin/true\"\n        pid_mode = \"shared\"\n      }\n    }\n  }\n}\n", "task.config.pid_mode", 7, `must be "private" or "host" (got "shared")`, false},
		{"network mode", jobWith("", "    network {\n      mode = \"cni/x\"\n    }"), "network.mode", 5, `network.mode "cni/x" is not supported by drover`, false},
		{"negative migrate max_parallel", jobWith("", "    migrate {\n      max_parallel = -1\n    }"), "migrate.max_parallel", 5, "migrate.max_parallel must not be negative (got -1)", false},
		{"migrate health_check manual", jobWith("  migrate {\n    health_check = \"manual\"\n  }", ""), "migrate.health_check", 3, `migrate.health_check must be checks or task_states (got "manual")`, false},
		{"migrate zero healthy_deadline", jobWith("", "    migrate {\n      healthy_deadline = \"0s\"\n    }"), "migrate.healthy_deadline", 5, "migrate.healthy_deadline must be positive (got 0s)", false},
		{"migrate min_healthy_time >= healthy_deadline", jobWith("", "    migrate {\n      min_healthy_time = \"1m\"\n      healthy_deadline = \"30s\"\n    }"), "migrate.min_healthy_time", 5, "must be less than healthy_deadline (1m0s >= 30s)", false},
		{"migrate negative min_healthy_time", jobWith("  migrate {\n    min_healthy_time = \"-1s\"\n  }", ""), "migrate.min_healthy_time", 3, "migrate.min_healthy_time must not be negative (got -1s)", false},
		{"migrate on batch job", jobWith("  type = \"batch\"\n  migrate {\n    max_parallel = 1\n  }", ""), "migrate", 3, `job type "batch" does not allow a migrate block`, false},
		{"group migrate on system job", jobWith("  type = \"system\"", "    migrate {\n      max_parallel = 1\n    }"), "migrate", 4, `job type "system" does not allow a migrate block`, false},
		{"unknown migrate attribute", jobWith("", "    migrate {\n      max_paralel = 2\n    }"), "migrate.max_paralel", 5, `unknown attribute "max_paralel" in migrate (did you mean max_parallel?)`, false},
		{"migrate max_parallel as string", jobWith("", "    migrate {\n      max_parallel = \"two\"\n    }"), "migrate.max_parallel", 5, "migrate.max_parallel must be number (got string)", false},
		{"unknown variable", jobWith("  region = var.nope", ""), "", 2, `Unsupported attribute`, false},
		{"syntax error", "job \"j\" {\n  group = {\n", "", 3, "", false},
	}
}

func TestValidationRules(t *testing.T) {
	for _, c := range rules() {
		t.Run(c.name, func(t *testing.T) { checkRule(t, "v.hcl", c) })
	}
}

// checkRule parses c.src as file and looks for c's diagnostic: on c.line,
// naming c.field, its message containing c.msg.
func checkRule(t *testing.T, file string, c rule) {
	t.Helper()
	job, warns, err := Parse(file, []byte(c.src), Options{})
	var list []Diagnostic
	if c.warn {
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		list = warns
	} else {
		var errs *Errors
		if !errors.As(err, &errs) {
			t.Fatalf("want *Errors, got %v (job %v)\n%s", err, job, c.src)
		}
		if job != nil {
			t.Errorf("job returned with errors")
		}
		list = errs.Diagnostics
	}
	for _, d := range list {
		if strings.Contains(d.Message, c.msg) && d.Line == c.line && (c.field == "" || d.Field == c.field) {
			if d.File != file || d.Column < 1 {
				t.Errorf("bad location %+v", d)
			}
			return
		}
	}
	t.Errorf("no diagnostic %q on line %d field %q in:\n%v\nsource:\n%s", c.msg, c.line, c.field, list, c.src)
}

// TestVarsAndFiles: -var typed per the variable, later wins, var files in
// HCL and JSON, undeclared -var refused.
func TestVarsAndFiles(t *testing.T) {
	dir := t.TempDir()
	hclFile, jsonFile := dir+"/a.hcl", dir+"/b.json"
	writeFile(t, hclFile, "count = 4\nname = \"from-hcl\"\n")
	writeFile(t, jsonFile, `{"name": "from-json"}`)
	src := []byte(`
variable "count" {
  type = number
}
variable "name" {
  type    = string
  default = "def"
}
variable "tags" {
  type    = list(string)
  default = []
}
job "j" {
  meta = {
    name = var.name
    tags = join(",", var.tags)
  }
  group "g" {
    count = var.count
    task "t" {
      driver = "mock"
    }
  }
}
`)
	job, _, err := Parse("j.hcl", src, Options{VarFiles: []string{hclFile, jsonFile}, Vars: []string{"tags=[\"a\",\"b\"]"}})
	if err != nil {
		t.Fatal(err)
	}
	if job.TaskGroups[0].Count != 4 || job.Meta["name"] != "from-json" || job.Meta["tags"] != "a,b" {
		t.Errorf("got count %d meta %v", job.TaskGroups[0].Count, job.Meta)
	}
	job, _, err = Parse("j.hcl", src, Options{Vars: []string{"count=2", "count=3", "name=x"}})
	if err != nil || job.TaskGroups[0].Count != 3 || job.Meta["name"] != "x" {
		t.Errorf("later -var should win: %v %v", job, err)
	}
	_, _, err = Parse("j.hcl", src, Options{Vars: []string{"count=two"}})
	if err == nil || !strings.Contains(err.Error(), "want number") {
		t.Errorf("typed -var: %v", err)
	}
	_, _, err = Parse("j.hcl", src, Options{Vars: []string{"count=1", "cuont=2"}})
	if err == nil || !strings.Contains(err.Error(), `did you mean count?`) {
		t.Errorf("undeclared -var: %v", err)
	}
	_, _, err = Parse("j.hcl", src, Options{})
	if err == nil || !strings.Contains(err.Error(), `j.hcl:2:1: variable "count" is required`) {
		t.Errorf("required variable: %v", err)
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := osWriteFile(path, []byte(content)); err != nil {
		t.Fatal(err)
	}
}
