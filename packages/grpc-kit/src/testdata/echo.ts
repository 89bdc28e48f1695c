import { fileURLToPath } from "node:url";
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";
import type { MethodDefinition } from "@grpc/proto-loader";
import { LOADER_OPTIONS, type Contract } from "@gateway/protos";

export type SayRequest = { text?: string; sleep_ms?: number; fail_with?: string };
export type SayRequestOut = { text: string; sleep_ms: number; fail_with: string };
export type SayResponse = { text?: string; request_id?: string };
export type SayResponseOut = { text: string; request_id: string };
export type CountRequest = { to?: number; fail_after?: number };
export type CountRequestOut = { to: number; fail_after: number };

import type { CarriedFrame, CarriedReply } from "../carried-server.js";

export type CarryFrame = CarriedFrame<SayRequest>;
export type CarryFrameOut = CarriedFrame<SayRequestOut>;
export type CarryReply = CarriedReply<SayResponse, SayResponse>;
export type CarryReplyOut = CarriedReply<SayResponseOut, SayResponseOut>;

export interface EchoDefinition extends grpc.ServiceDefinition {
  Say: MethodDefinition<SayRequest, SayResponse, SayRequestOut, SayResponseOut>;
  Count: MethodDefinition<CountRequest, SayResponse, CountRequestOut, SayResponseOut>;
  Collect: MethodDefinition<SayRequest, SayResponse, SayRequestOut, SayResponseOut>;
  Carry: MethodDefinition<CarryFrame, CarryReply, CarryFrameOut, CarryReplyOut>;
}
export interface EchoHandlers extends grpc.UntypedServiceImplementation {
  Say: grpc.handleUnaryCall<SayRequestOut, SayResponse>;
  Count: grpc.handleServerStreamingCall<CountRequestOut, SayResponse>;
  Collect: grpc.handleClientStreamingCall<SayRequestOut, SayResponse>;
  Carry: grpc.handleBidiStreamingCall<CarryFrameOut, CarryReply>;
}

const file = fileURLToPath(new URL("./echo.proto", import.meta.url));

export const echoContract: Contract<EchoDefinition, EchoHandlers> = {
  serviceName: "test.echo.v1.Echo",
  file,
  definition() {
    const pkg = grpc.loadPackageDefinition(protoLoader.loadSync(file, LOADER_OPTIONS)) as unknown as {
      test: { echo: { v1: { Echo: grpc.ServiceClientConstructor } } };
    };
    return pkg.test.echo.v1.Echo.service as unknown as EchoDefinition;
  },
};
