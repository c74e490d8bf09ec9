package nomadcompat

// Flag is one flag of a Nomad command: its name (spelled with one dash on
// the command line) and its kind: "bool", "string", "int", "duration",
// "float" or "value" (a string flag.Value, which some commands repeat, such
// as -var).
type Flag struct {
	Name string
	Kind string
}

// CommandFlags are the flags one of Nomad's commands parses.
type CommandFlags struct {
	// Client: the command also takes GlobalFlags (it talks to an agent).
	Client bool
	Flags  []Flag
}

// FlagsOf returns every flag Nomad's command path accepts, GlobalFlags
// included when it takes them, and whether Nomad has the command.
func FlagsOf(path string) ([]Flag, bool) {
	c, ok := NomadFlags[path]
	if !ok {
		return nil, false
	}
	out := append([]Flag(nil), c.Flags...)
	if c.Client {
		seen := map[string]bool{}
		for _, f := range out {
			seen[f.Name] = true
		}
		for _, f := range GlobalFlags {
			if !seen[f.Name] {
				out = append(out, f)
			}
		}
	}
	return out, true
}
