package telemetry

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// TestPrintCatalog prints the catalog as website/api/metrics.md's table
// (DROVER_PRINT_CATALOG=1 go test ./telemetry -run TestPrintCatalog -v).
func TestPrintCatalog(t *testing.T) {
	if os.Getenv("DROVER_PRINT_CATALOG") == "" {
		t.Skip("prints the docs table on demand")
	}
	for _, m := range Catalog {
		labels := "—"
		if len(m.Labels) > 0 {
			labels = "`" + strings.Join(m.Labels, "`, `") + "`"
		}
		fmt.Printf("| `%s` | %s | %s | %s | %s |\n", m.Name, m.Kind, labels, m.Where, m.Help)
	}
}
