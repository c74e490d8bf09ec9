package jobdiff

import (
	"fmt"
	"sort"
	"strings"
)

// Format renders a diff as `job plan` and `job history -p` print it, in
// Nomad's layout: a marker per line ("+" added, "-" deleted, "+/-" edited),
// blocks in braces, what a change forces in parentheses. Unchanged fields,
// blocks and tasks are shown only when verbose.
//
//	+/- Job: "web"
//	+/- Task Group: "web" (1 create/destroy update, 2 ignore)
//	  +/- Task: "app" (forces create/destroy update)
//	    +/- Env[VERSION]: "1" => "2"
func Format(d *JobDiff, verbose bool) string {
	if d == nil {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s Job: %q\n", marker(d.Type), d.ID)
	writeFields(&b, "", d.Fields, verbose)
	writeObjects(&b, "", d.Objects, verbose)
	for _, g := range d.TaskGroups {
		if g.Type == TypeNone && !verbose && len(g.Updates) == 0 {
			continue
		}
		line := fmt.Sprintf("%s Task Group: %q", marker(g.Type), g.Name)
		if c := UpdatesString(g.Updates); c != "" {
			line += " (" + c + ")"
		}
		b.WriteString(line + "\n")
		writeFields(&b, "  ", g.Fields, verbose)
		writeObjects(&b, "  ", g.Objects, verbose)
		for _, t := range g.Tasks {
			if t.Type == TypeNone && !verbose {
				continue
			}
			line := fmt.Sprintf("  %s Task: %q", marker(t.Type), t.Name)
			if len(t.Annotations) > 0 {
				line += " (" + strings.Join(t.Annotations, ", ") + ")"
			}
			b.WriteString(line + "\n")
			writeFields(&b, "    ", t.Fields, verbose)
			writeObjects(&b, "    ", t.Objects, verbose)
		}
	}
	return b.String()
}

// UpdatesString renders a group's update counts in Nomad's order:
// "1 create, 1 create/destroy update, 2 ignore".
func UpdatesString(u map[string]uint64) string {
	order := []string{"create", "destroy", "migrate", "canary", "in-place update", "create/destroy update", "ignore"}
	var parts []string
	seen := map[string]bool{}
	for _, k := range order {
		seen[k] = true
		if n := u[k]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, k))
		}
	}
	var rest []string
	for k := range u {
		if !seen[k] && u[k] > 0 {
			rest = append(rest, k)
		}
	}
	sort.Strings(rest)
	for _, k := range rest {
		parts = append(parts, fmt.Sprintf("%d %s", u[k], k))
	}
	return strings.Join(parts, ", ")
}

func writeFields(b *strings.Builder, indent string, fields []*FieldDiff, verbose bool) {
	shown := make([]*FieldDiff, 0, len(fields))
	width := 0
	for _, f := range fields {
		if f.Type == TypeNone && !verbose {
			continue
		}
		shown = append(shown, f)
		width = max(width, len(f.Name))
	}
	for _, f := range shown {
		var value string
		switch f.Type {
		case TypeAdded:
			value = fmt.Sprintf("%q", f.New)
		case TypeDeleted:
			value = fmt.Sprintf("%q", f.Old)
		case TypeEdited:
			value = fmt.Sprintf("%q => %q", f.Old, f.New)
		default:
			value = fmt.Sprintf("%q", f.New)
		}
		line := fmt.Sprintf("%s%s %-*s %s", indent, marker(f.Type), width+1, f.Name+":", value)
		if len(f.Annotations) > 0 {
			line += " (" + strings.Join(f.Annotations, ", ") + ")"
		}
		b.WriteString(line + "\n")
	}
}

func writeObjects(b *strings.Builder, indent string, objects []*ObjectDiff, verbose bool) {
	for _, o := range objects {
		if o.Type == TypeNone && !verbose {
			continue
		}
		fmt.Fprintf(b, "%s%s %s {\n", indent, marker(o.Type), o.Name)
		writeFields(b, indent+"  ", o.Fields, verbose)
		writeObjects(b, indent+"  ", o.Objects, verbose)
		fmt.Fprintf(b, "%s  }\n", indent)
	}
}

// marker is a line's change mark; an unchanged line gets blanks as wide
// as "+/-", so that its name lines up under an edited one.
func marker(t string) string {
	switch t {
	case TypeAdded:
		return "+"
	case TypeDeleted:
		return "-"
	case TypeEdited:
		return "+/-"
	}
	return "   "
}
