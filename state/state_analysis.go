package state

import (
	"fmt"

	"github.com/droverhq/drover/structs"
)

// UpdateDeploymentAnalysisTxn applies changes of a deployment's analysis
// runs (structs.DeploymentAnalysisRequest, structs.ApplyAnalysisRequest):
// each update that still applies to the group's runs as stored sets or
// appends its run, WaitReasons set the groups' wait reasons, and the other
// updates are dropped, as is the whole request when the deployment has
// ended (its runs end with it: a measurement finished after a job update
// cancelled the deployment changes nothing). The deployment, and the
// request's evaluation, are written only when something changed.
func (s *Store) UpdateDeploymentAnalysisTxn(t *WriteTxn, req *structs.DeploymentAnalysisRequest) error {
	if req == nil || req.DeploymentID == "" {
		return fmt.Errorf("state: analysis update without deployment: %w", ErrInvalid)
	}
	d, err := t.reader().DeploymentByID(req.DeploymentID)
	if err != nil {
		return err
	}
	if d == nil || !d.Active() {
		return nil
	}
	c := d.Copy()
	if !structs.ApplyAnalysisRequest(c, req) {
		return nil
	}
	if err := s.putDeployment(t, c, req.UpdatedAt); err != nil {
		return err
	}
	if req.Eval != nil {
		return s.upsertEval(t, req.Eval)
	}
	return nil
}

// UpdateDeploymentAnalysis is UpdateDeploymentAnalysisTxn in its own
// transaction.
func (s *Store) UpdateDeploymentAnalysis(index uint64, req *structs.DeploymentAnalysisRequest) error {
	return s.update(index, func(t *WriteTxn) error { return s.UpdateDeploymentAnalysisTxn(t, req) })
}
