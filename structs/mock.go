package structs

import "fmt"

// MockMaxOutputBytes bounds each of a mock task's stdout_string and
// stderr_string: Nomad's job_max_source_size default (1M), the largest
// job source Nomad keeps, so that a job carrying one still fits.
const MockMaxOutputBytes = MaxJobSourceSize

// MockOutputKeys are the mock config keys whose text the task writes to
// its stdout and stderr when it starts, as Nomad's mock_driver does.
var MockOutputKeys = []string{"stdout_string", "stderr_string"}

// CheckMockConfig checks the keys of a mock task's config that the job
// can be refused for before it runs: stdout_string and stderr_string are
// strings of at most MockMaxOutputBytes. The other keys are checked when
// the task starts (drivers/mock).
func CheckMockConfig(m map[string]any) []ConfigError {
	var errs []ConfigError
	for _, k := range MockOutputKeys {
		switch v := m[k].(type) {
		case nil:
		case string:
			if len(v) > MockMaxOutputBytes {
				errs = append(errs, ConfigError{Key: k, Msg: fmt.Sprintf("is %d bytes, more than %d", len(v), MockMaxOutputBytes)})
			}
		default:
			errs = append(errs, ConfigError{Key: k, Msg: "must be a string"})
		}
	}
	return errs
}
