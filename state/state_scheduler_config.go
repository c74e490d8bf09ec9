package state

import (
	"github.com/droverhq/drover/structs"
)

// TableSchedulerConfig holds one row: the cluster's scheduler
// configuration (structs.SchedulerConfiguration).
const TableSchedulerConfig = "scheduler_config"

// SchedulerConfigRecord is the single row of the scheduler_config table.
type SchedulerConfigRecord struct {
	Key    string // always schedulerConfigKey
	Config structs.SchedulerConfiguration
}

const schedulerConfigKey = "scheduler"

// SchedulerConfig returns the stored scheduler configuration, or nil when
// none was ever written (the cluster then runs with
// structs.DefaultSchedulerConfiguration).
func (s *Snapshot) SchedulerConfig() (*structs.SchedulerConfiguration, error) {
	r, err := getOne[*SchedulerConfigRecord](s, TableSchedulerConfig, "id", schedulerConfigKey)
	if err != nil || r == nil {
		return nil, err
	}
	c := r.Config
	return &c, nil
}

// EffectiveSchedulerConfig is the stored configuration, or the default
// when none was written.
func (s *Snapshot) EffectiveSchedulerConfig() (structs.SchedulerConfiguration, error) {
	c, err := s.SchedulerConfig()
	if err != nil || c == nil {
		return structs.DefaultSchedulerConfiguration(), err
	}
	return *c, nil
}

// SetSchedulerConfigTxn stores req.Config inside t and reports whether it
// did: with req.CAS, only when the stored configuration's ModifyIndex is
// req.Config.ModifyIndex (0 when there is none), as Nomad's
// check-and-set; otherwise always.
func (s *Store) SetSchedulerConfigTxn(t *WriteTxn, req *structs.SchedulerSetConfigRequest) (bool, error) {
	old, err := t.reader().SchedulerConfig()
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
	if c.SchedulerAlgorithm == "" {
		c.SchedulerAlgorithm = "binpack"
	}
	c.CreateIndex, c.ModifyIndex = t.index, t.index
	if old != nil {
		c.CreateIndex = old.CreateIndex
	}
	return true, t.insert(TableSchedulerConfig, &SchedulerConfigRecord{Key: schedulerConfigKey, Config: c})
}
