package server

import "github.com/droverhq/drover/fsm"

const fsmPlanType = fsm.ApplyPlanResultsRequestType
const fsmNodeRegisterType = fsm.NodeRegisterRequestType
