package state

import (
	"github.com/droverhq/drover/structs"
)

// AutopilotRecord is the single row of the autopilot table: the cluster's
// autopilot configuration (see package autopilot), replicated so that
// every leader runs autopilot with the same settings.
type AutopilotRecord struct {
	Key    string // always autopilotKey
	Config structs.AutopilotConfig
}

const autopilotKey = "autopilot"

// AutopilotConfig returns the stored autopilot configuration, or nil when
// none was ever written.
func (s *Snapshot) AutopilotConfig() (*structs.AutopilotConfig, error) {
	r, err := getOne[*AutopilotRecord](s, TableAutopilot, "id", autopilotKey)
	if err != nil || r == nil {
		return nil, err
	}
	c := r.Config
	return &c, nil
}

// SetAutopilotConfigTxn stores req.Config inside t and reports whether it
// did: with req.CAS, only when the stored configuration's ModifyIndex is
// req.Config.ModifyIndex (0 when there is none), as Nomad's
// check-and-set; otherwise always.
func (s *Store) SetAutopilotConfigTxn(t *WriteTxn, req *structs.AutopilotSetConfigRequest) (bool, error) {
	old, err := t.reader().AutopilotConfig()
	if err != nil {
		return false, err
	}
	if req.CAS {
		var cur uint64
		if old != nil {
			cur = old.ModifyIndex
		}
		if cur != req.Config.ModifyIndex {
			return false, nil
		}
	}
	c := req.Config
	c.CreateIndex, c.ModifyIndex = t.index, t.index
	if old != nil {
		c.CreateIndex = old.CreateIndex
	}
	return true, t.insert(TableAutopilot, &AutopilotRecord{Key: autopilotKey, Config: c})
}
