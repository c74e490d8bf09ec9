package state

import "github.com/droverhq/drover/structs"

// RegisterJobAtVersion stores a region's copy of a multi-region job at the
// version all its regions take; see structs.JobRegisterAtVersionRequest.
func (s *Store) RegisterJobAtVersion(index uint64, req *structs.JobRegisterAtVersionRequest) (*structs.JobRegisterResult, error) {
	var res *structs.JobRegisterResult
	err := s.update(index, func(t *WriteTxn) error {
		var err error
		res, err = s.RegisterJobAtVersionTxn(t, req)
		return err
	})
	return res, err
}

// RegisterJobAtVersionTxn is RegisterJobAtVersion inside t: the
// registration of RegisterJobTxn (index check, evaluation, deployment,
// submitted source), its new version numbered req.Version.
func (s *Store) RegisterJobAtVersionTxn(t *WriteTxn, req *structs.JobRegisterAtVersionRequest) (*structs.JobRegisterResult, error) {
	v := req.Version
	return s.registerJobTxn(t, &req.Register, &v)
}
