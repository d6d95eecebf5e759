import SSOCore

// The benchmark's reference: the same FastCGI runtime and nginx path as the
// real responders, doing no work. Scripts/bench measures against it.
struct HelloResponder: Responder {
    let response = Response(status: 200, headers: [("Content-Type", "application/json")], body: Array("{\"hello\":\"world\"}".utf8))
    func respond(to request: Request) throws -> Response { response }
}

FastCGIServer.serve(endpoint: "hello", responder: HelloResponder())
