package scheduler

import (
	"fmt"
	"math"
	"testing"

	"github.com/droverhq/drover/structs"
)

// rackNodes are 6 ready nodes: n0..n2 in rack r1 (class "large" for n0),
// n3..n5 in rack r2.
func rackNodes() []*structs.Node {
	return nodes(6, func(i int, n *structs.Node) {
		n.Meta = map[string]string{"rack": "r1"}
		if i >= 3 {
			n.Meta["rack"] = "r2"
		}
		if i == 0 {
			n.NodeClass = "large"
		}
	})
}

func rack(op, value string, weight int8) *structs.Affinity {
	return &structs.Affinity{LTarget: "${meta.rack}", Operand: op, RTarget: value, Weight: weight}
}

// TestAffinityScore: the score of a node is the weights of the affinities
// that hold on it over the sum of all weights' magnitudes, as Nomad's.
func TestAffinityScore(t *testing.T) {
	r1 := rackNodes()[0]
	for _, c := range []struct {
		name string
		affs []*structs.Affinity
		want float64
	}{
		{"one attracting affinity that holds", []*structs.Affinity{rack("=", "r1", 50)}, 1},
		{"one attracting affinity that does not hold", []*structs.Affinity{rack("=", "r2", 50)}, 0},
		{"one repelling affinity that holds", []*structs.Affinity{rack("=", "r1", -30)}, -1},
		{"two of three hold", []*structs.Affinity{rack("=", "r1", 50), rack("!=", "r2", -25), {LTarget: "${node.class}", Operand: "=", RTarget: "small", Weight: 25}}, 0.25},
		{"regexp", []*structs.Affinity{rack("regexp", "^r[0-9]$", 100)}, 1},
		{"set_contains_any", []*structs.Affinity{rack("set_contains_any", "r7,r1", 100)}, 1},
		{"an attribute the node lacks never holds", []*structs.Affinity{{LTarget: "${meta.gpu}", Operand: "=", RTarget: "yes", Weight: 80}}, 0},
		{"none", nil, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := affinityScore(c.affs, r1, nil); math.Abs(got-c.want) > 1e-9 {
				t.Errorf("affinityScore = %v, want %v", got, c.want)
			}
		})
	}
}

// TestAffinityPlacement: a positive affinity attracts a group's placements
// to the nodes where it holds, a negative one repels them, from any seed;
// neither ever overrides a constraint or a node's capacity, and affinities
// of the job, the group and its tasks all count.
func TestAffinityPlacement(t *testing.T) {
	inRack := func(allocs []*structs.Allocation, ns []*structs.Node, want string) int {
		byID := map[string]*structs.Node{}
		for _, n := range ns {
			byID[n.ID] = n
		}
		c := 0
		for _, a := range allocs {
			if byID[a.NodeID].Meta["rack"] == want {
				c++
			}
		}
		return c
	}
	for _, c := range []struct {
		name   string
		count  int
		mod    func(j *structs.Job)
		nodes  func(ns []*structs.Node)
		placed int
		inR1   int // allocs on rack r1
	}{
		{name: "attract: all on r1", count: 3, mod: func(j *structs.Job) {
			j.TaskGroups[0].Affinities = []*structs.Affinity{rack("=", "r1", 100)}
		}, placed: 3, inR1: 3},
		{name: "attract with a small weight still wins among equals", count: 3, mod: func(j *structs.Job) {
			j.Affinities = []*structs.Affinity{rack("=", "r1", 1)}
		}, placed: 3, inR1: 3},
		{name: "repel: none on r1", count: 3, mod: func(j *structs.Job) {
			j.TaskGroups[0].Tasks[0].Affinities = []*structs.Affinity{rack("=", "r1", -100)}
		}, placed: 3, inR1: 0},
		{name: "a constraint wins over an affinity", count: 3, mod: func(j *structs.Job) {
			j.Constraints = []*structs.Constraint{{LTarget: "${meta.rack}", Operand: "=", RTarget: "r2"}}
			j.TaskGroups[0].Affinities = []*structs.Affinity{rack("=", "r1", 100)}
		}, placed: 3, inR1: 0},
		{name: "an affinity that no node meets places anyway", count: 3, mod: func(j *structs.Job) {
			j.TaskGroups[0].Affinities = []*structs.Affinity{rack("=", "r9", 100)}
		}, placed: 3, inR1: -1},
		{name: "full preferred nodes: the rest go elsewhere", count: 5, mod: func(j *structs.Job) {
			j.TaskGroups[0].Affinities = []*structs.Affinity{rack("=", "r1", 100)}
			j.TaskGroups[0].Tasks[0].Resources.MemoryMB = 5000
		}, placed: 5, inR1: 3},
		{name: "repelled nodes still take what the others cannot", count: 5, mod: func(j *structs.Job) {
			j.TaskGroups[0].Affinities = []*structs.Affinity{rack("=", "r1", -100)}
			j.TaskGroups[0].Tasks[0].Resources.MemoryMB = 5000
		}, placed: 5, inR1: 2},
		{name: "job attracts, group repels harder: r2", count: 3, mod: func(j *structs.Job) {
			j.Affinities = []*structs.Affinity{rack("=", "r1", 40)}
			j.TaskGroups[0].Affinities = []*structs.Affinity{rack("=", "r1", -90)}
		}, placed: 3, inR1: 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			for seed := uint64(1); seed <= 20; seed++ {
				ns := rackNodes()
				j, plan := placeJob(c.count, c.mod)
				res := NewPlacer(ns, nil, seed).Place(j, plan, baseTime)
				if len(res.Allocs) != c.placed {
					t.Fatalf("seed %d: placed %d, want %d (failed: %+v)", seed, len(res.Allocs), c.placed, res.Failed)
				}
				if c.inR1 >= 0 {
					if got := inRack(res.Allocs, ns, "r1"); got != c.inR1 {
						t.Fatalf("seed %d: %d allocs on rack r1, want %d: %v", seed, got, c.inR1, perNode(res.Allocs))
					}
				}
				for _, con := range j.Constraints {
					for _, a := range res.Allocs {
						if n := ns[a.NodeID[1]-'0']; !meetsConstraint(con, n, nil) {
							t.Fatalf("seed %d: alloc on %s breaks constraint %s", seed, a.NodeID, constraintKey(con))
						}
					}
				}
			}
		})
	}
}

// TestAffinityDeterministic: the same nodes and seed give the same
// placements with affinities, as without.
func TestAffinityDeterministic(t *testing.T) {
	place := func() string {
		j, plan := placeJob(7, func(j *structs.Job) {
			j.TaskGroups[0].Affinities = []*structs.Affinity{rack("=", "r2", 60), {LTarget: "${node.class}", Operand: "=", RTarget: "large", Weight: 30}}
		})
		res := NewPlacer(rackNodes(), nil, 42).Place(j, plan, baseTime)
		return fmt.Sprint(perNode(res.Allocs))
	}
	first := place()
	for range 5 {
		if again := place(); again != first {
			t.Fatalf("placements differ: %s, then %s", first, again)
		}
	}
}

// TestAffinityIsDestructive: a changed affinity replaces allocations, as a
// changed constraint or spread does.
func TestAffinityIsDestructive(t *testing.T) {
	old := baseJob()
	for name, mod := range map[string]func(j *structs.Job){
		"job":   func(j *structs.Job) { j.Affinities = []*structs.Affinity{rack("=", "r1", 50)} },
		"group": func(j *structs.Job) { j.TaskGroups[0].Affinities = []*structs.Affinity{rack("=", "r1", 50)} },
		"task":  func(j *structs.Job) { j.TaskGroups[0].Tasks[0].Affinities = []*structs.Affinity{rack("=", "r1", 50)} },
	} {
		nj := old.Copy()
		nj.Version++
		mod(nj)
		if k := UpdateKindFor(old, nj, "web"); k != UpdateDestructive {
			t.Errorf("%s affinity added: update %s, want destructive", name, k)
		}
	}
}
