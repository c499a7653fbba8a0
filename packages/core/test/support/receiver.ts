// Core's own tests use the engine scenario suite's receiver: a real server on 127.0.0.1, scripted per path.
export {
  type Reply,
  type ScenarioReceiver as Receiver,
  type SeenRequest,
  startScenarioReceiver as startReceiver,
} from "../../src/testing/scenarios/receiver.js";
