package rawexec

import (
	"fmt"

	"github.com/droverhq/drover/drivers"
)

// taskConfig is raw_exec's driver block: command (required) and args.
type taskConfig struct {
	Command string
	Args    []string
}

func parseConfig(m map[string]any) (taskConfig, error) {
	var c taskConfig
	cmd, ok := m["command"].(string)
	if !ok || cmd == "" {
		return c, fmt.Errorf("%w: raw_exec needs a string \"command\"", drivers.ErrInvalidConfig)
	}
	c.Command = cmd
	switch a := m["args"].(type) {
	case nil:
	case []string:
		c.Args = append([]string(nil), a...)
	case []any:
		for i, v := range a {
			s, ok := v.(string)
			if !ok {
				return c, fmt.Errorf("%w: raw_exec args[%d] is %T, not a string", drivers.ErrInvalidConfig, i, v)
			}
			c.Args = append(c.Args, s)
		}
	default:
		return c, fmt.Errorf("%w: raw_exec \"args\" is %T, not a list of strings", drivers.ErrInvalidConfig, a)
	}
	return c, nil
}
