package jobspec

import (
	"github.com/droverhq/drover/structs"
)

// disconnect builds a group's disconnect strategy from its disconnect
// block, or from the older max_client_disconnect and
// stop_after_client_disconnect, with Nomad's defaults (replace = true,
// reconcile = "best_score"); nil when the group writes none.
func (b *builder) disconnect(path, jobType string, atg *specGroup) *structs.DisconnectStrategy {
	ad := atg.Disconnect
	var legacy []string
	if atg.MaxClientDisconnect != nil {
		legacy = append(legacy, "MaxClientDisconnect")
	}
	if atg.StopAfterClientDisconnect != nil {
		legacy = append(legacy, "StopAfterClientDisconnect")
	}
	if ad == nil && len(legacy) == 0 {
		return nil
	}
	if ad != nil && len(legacy) > 0 {
		for _, f := range legacy {
			b.err(path+"."+f, "cannot be set together with the disconnect block (write its lost_after or stop_on_client_after)")
		}
		return nil
	}
	d := &structs.DisconnectStrategy{Replace: true, Reconcile: structs.ReconcileBestScore}
	lostPath, stopPath, lostName := path+".Disconnect.LostAfter", path+".Disconnect.StopOnClientAfter", "lost_after"
	where := path + ".Disconnect"
	if ad != nil {
		if ad.LostAfter != nil {
			d.LostAfter = *ad.LostAfter
		}
		if ad.StopOnClientAfter != nil {
			v := *ad.StopOnClientAfter
			d.StopOnClientAfter = &v
		}
		if ad.Replace != nil {
			d.Replace = *ad.Replace
		}
		if ad.Reconcile != nil {
			d.Reconcile = *ad.Reconcile
		}
	} else {
		lostPath, stopPath, lostName = path+".MaxClientDisconnect", path+".StopAfterClientDisconnect", "max_client_disconnect"
		where = path + "." + legacy[0]
		if atg.MaxClientDisconnect != nil {
			d.LostAfter = *atg.MaxClientDisconnect
		}
		if atg.StopAfterClientDisconnect != nil {
			v := *atg.StopAfterClientDisconnect
			d.StopOnClientAfter = &v
		}
	}
	if structs.PerNode(jobType) {
		b.err(where, "is not supported by drover for %s jobs (their allocations are lost with their node)", jobType)
	}
	if d.LostAfter < 0 {
		b.err(lostPath, "must not be negative (got %s)", d.LostAfter)
	}
	if s := d.StopOnClientAfter; s != nil {
		switch {
		case *s < 0:
			b.err(stopPath, "must not be negative (got %s)", *s)
		case d.LostAfter != 0:
			b.err(stopPath, "cannot be set together with %s", lostName)
		}
	}
	switch d.Reconcile {
	case structs.ReconcileBestScore, structs.ReconcileKeepOriginal, structs.ReconcileKeepReplacement, structs.ReconcileLongestRunning:
	default:
		b.err(path+".Disconnect.Reconcile", "must be best_score, keep_original, keep_replacement or longest_running (got %q)", d.Reconcile)
	}
	return d
}
