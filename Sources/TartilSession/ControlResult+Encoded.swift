import TartilCore

// A request's typed result, read back from the JSON its `Encodable` conformance writes (the control socket's
// `"result"`), without Foundation's decoder: see `JSONNode+Encoded.swift` in TartilCore for why and for the forms.

extension ControlResult {
    /// The result in `node`, as `JSONEncoder` writes it; `ShapeError` names what does not fit.
    public init(encoded node: JSONNode, _ what: String = "result") throws(JSONNode.ShapeError) {
        let form = try node.enumCase(what, of: ["status", "started", "stopped", "bookmark"])
        let name = form.values.name("_0")
        switch form.name {
        case "status": self = .status(try PlayerStatus(encoded: form.values.required("_0"), name))
        case "started": self = .started(try PlayStarted(encoded: form.values.required("_0"), name))
        case "stopped": self = .stopped
        default: self = .bookmark(try Bookmark(encoded: form.values.required("_0"), name))
        }
    }
}

extension PlayStarted {
    /// The start in `node`, as `JSONEncoder` writes it.
    public init(encoded node: JSONNode, _ what: String) throws(JSONNode.ShapeError) {
        let members = try node.members(what)
        self.init(
            status: try PlayerStatus(encoded: members.required("status"), members.name("status")),
            resumed: try members.optional("resumed").map { node throws(JSONNode.ShapeError) in
                try ResumePoint(encoded: node, members.name("resumed"))
            },
            notes: try members.optional("notes").map { node throws(JSONNode.ShapeError) in try node.texts(members.name("notes")) })
    }
}

extension ResumePoint {
    /// The resume point in `node`, as `JSONEncoder` writes it.
    public init(encoded node: JSONNode, _ what: String) throws(JSONNode.ShapeError) {
        let members = try node.members(what)
        self.init(
            reciter: try members.string("reciter"), ayah: try AyahRef(encoded: members.required("ayah"), members.name("ayah")),
            offsetSamples: try members.int("offsetSamples"), offsetMs: try members.int64("offsetMs"), reason: try members.string("reason"),
            recordedMs: try members.int64("recordedMs"),
            after: try members.optional("after").map { node throws(JSONNode.ShapeError) in try AyahRef(encoded: node, members.name("after")) })
    }
}
