package analysis

import (
	"math"
	"testing"
)

// FuzzEvaluate: any condition on any values gives an outcome or an error,
// never a panic, and never success with an error.
func FuzzEvaluate(f *testing.F) {
	f.Add("result < 0.01", "result >= 0.05", 0.02, 1.0)
	f.Add("max(results...) < 1", "", math.Inf(1), -3.0)
	f.Add("alltrue([for r in results : r < 1])", "result / 0 > 1", 0.0, 0.0)
	f.Add("sum(results) == 0", "\"x\"", 1e308, 1e308)
	f.Fuzz(func(t *testing.T, success, failure string, a, b float64) {
		out, err := Evaluate(success, failure, []float64{a, b})
		if err != nil && out != "" {
			t.Fatalf("outcome %q with error %v", out, err)
		}
		if err == nil && out == "" {
			t.Fatal("no outcome and no error")
		}
	})
}
