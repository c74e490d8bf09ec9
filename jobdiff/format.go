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
	fmt.Fprintf(&b, "%s Job: %q\n", orBlank(marker(d.Type)), d.ID)
	var groups []*TaskGroupDiff
	for _, g := range d.TaskGroups {
		if g.Type != TypeNone || verbose || len(g.Updates) > 0 {
			groups = append(groups, g)
		}
	}
	// The job's fields, objects and group lines are one block: their
	// markers line up.
	w := blockWidth(d.Fields, d.Objects, verbose)
	for _, g := range groups {
		w = max(w, len(marker(g.Type)))
	}
	writeFields(&b, "", w, d.Fields, verbose)
	writeObjects(&b, "", w, d.Objects, verbose)
	for _, g := range groups {
		line := fmt.Sprintf("%s Task Group: %q", pad(marker(g.Type), w), g.Name)
		if c := UpdatesString(g.Updates); c != "" {
			line += " (" + c + ")"
		}
		b.WriteString(line + "\n")
		var tasks []*TaskDiff
		for _, t := range g.Tasks {
			if t.Type != TypeNone || verbose {
				tasks = append(tasks, t)
			}
		}
		gw := blockWidth(g.Fields, g.Objects, verbose)
		for _, t := range tasks {
			gw = max(gw, len(marker(t.Type)))
		}
		writeFields(&b, "  ", gw, g.Fields, verbose)
		writeObjects(&b, "  ", gw, g.Objects, verbose)
		for _, t := range tasks {
			line := fmt.Sprintf("  %s Task: %q", pad(marker(t.Type), gw), t.Name)
			if len(t.Annotations) > 0 {
				line += " (" + strings.Join(t.Annotations, ", ") + ")"
			}
			b.WriteString(line + "\n")
			tw := blockWidth(t.Fields, t.Objects, verbose)
			writeFields(&b, "    ", tw, t.Fields, verbose)
			writeObjects(&b, "    ", tw, t.Objects, verbose)
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

// blockWidth is the widest change mark among the fields and objects of
// one block that are shown, so that their names line up.
func blockWidth(fields []*FieldDiff, objects []*ObjectDiff, verbose bool) int {
	w := 0
	for _, f := range fields {
		if f.Type != TypeNone || verbose {
			w = max(w, len(marker(f.Type)))
		}
	}
	for _, o := range objects {
		if o.Type != TypeNone || verbose {
			w = max(w, len(marker(o.Type)))
		}
	}
	return w
}

func writeFields(b *strings.Builder, indent string, markWidth int, fields []*FieldDiff, verbose bool) {
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
		line := fmt.Sprintf("%s%s %-*s %s", indent, pad(marker(f.Type), markWidth), width+1, f.Name+":", value)
		if len(f.Annotations) > 0 {
			line += " (" + strings.Join(f.Annotations, ", ") + ")"
		}
		b.WriteString(line + "\n")
	}
}

func writeObjects(b *strings.Builder, indent string, markWidth int, objects []*ObjectDiff, verbose bool) {
	for _, o := range objects {
		if o.Type == TypeNone && !verbose {
			continue
		}
		fmt.Fprintf(b, "%s%s %s {\n", indent, pad(marker(o.Type), markWidth), o.Name)
		w := blockWidth(o.Fields, o.Objects, verbose)
		writeFields(b, indent+"  ", w, o.Fields, verbose)
		writeObjects(b, indent+"  ", w, o.Objects, verbose)
		fmt.Fprintf(b, "%s  }\n", indent)
	}
}

// marker is a change's mark: "+" added, "-" deleted, "+/-" edited, none
// for unchanged.
func marker(t string) string {
	switch t {
	case TypeAdded:
		return "+"
	case TypeDeleted:
		return "-"
	case TypeEdited:
		return "+/-"
	}
	return ""
}

// pad widens a mark to the block's widest, so that names line up.
func pad(mark string, width int) string {
	return mark + strings.Repeat(" ", max(0, width-len(mark)))
}

// orBlank is a lone line's mark: a blank when unchanged.
func orBlank(mark string) string {
	if mark == "" {
		return " "
	}
	return mark
}
