import FoundationEssentials
import Glibc

/// A process's counters in a file mapped into its memory (`mmap`,
/// MAP_SHARED): the process adds to them with plain memory writes, and the
/// ops responder, another process, reads the same pages.
///
/// Why a file per process and no lock: every responder process is
/// single-threaded and is the only writer of its own file (one file per
/// pool slot, and a slot runs one process at a time), so an increment is
/// one aligned 8-byte store, which x86-64 and ARM64 never tear; the reader
/// may see a snapshot a few increments old, never a torn value. Nothing on
/// the request path waits for anyone, makes a system call or talks to
/// another process. The file outlives the process: a slot restarted after
/// a crash continues its counts, so sums stay monotonic.
///
/// Layout: a 96-byte header (magic, layout fingerprint, slot count, pid,
/// endpoint name), then `MetricCatalogue.slotCount` little-endian UInt64s.
public final class CounterFile {
    static let magic: UInt64 = 0x3143_5254_454d_4847  // "GHMETRC1" little-endian
    static let headerSize = 96
    static let endpointOffset = 32
    static let endpointCapacity = headerSize - endpointOffset
    static var fileSize: Int { headerSize + MetricCatalogue.slotCount * 8 }

    let base: UnsafeMutableRawPointer
    let mappedSize: Int
    let isMapped: Bool
    var slots: UnsafeMutablePointer<UInt64> { (base + Self.headerSize).assumingMemoryBound(to: UInt64.self) }

    /// Maps `path` (created 0600 if missing; a file of another layout or
    /// endpoint starts from zero) for `endpoint`.
    public init(path: String, endpoint: String) throws {
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0o600)  // a FIFO must not hang the start
        guard fd >= 0 else { throw CounterFileError("cannot open \(path): errno \(errno)") }
        defer { close(fd) }
        var status = stat()
        guard fstat(fd, &status) == 0, (status.st_mode & S_IFMT) == S_IFREG else { throw CounterFileError("\(path) is not a regular file") }
        if Int(status.st_size) != Self.fileSize, ftruncate(fd, off_t(Self.fileSize)) != 0 {
            throw CounterFileError("cannot size \(path): errno \(errno)")
        }
        guard let mapped = mmap(nil, Self.fileSize, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0), mapped != MAP_FAILED else {
            throw CounterFileError("cannot map \(path): errno \(errno)")
        }
        base = mapped
        mappedSize = Self.fileSize
        isMapped = true
        adopt(endpoint: endpoint)
    }

    /// Counters in this process's memory only (tests, ssoctl, or a process
    /// whose counter directory cannot be written).
    public init(inMemoryFor endpoint: String) {
        base = UnsafeMutableRawPointer.allocate(byteCount: Self.fileSize, alignment: 8)
        base.initializeMemory(as: UInt8.self, repeating: 0, count: Self.fileSize)
        mappedSize = Self.fileSize
        isMapped = false
        adopt(endpoint: endpoint)
    }

    deinit {
        if isMapped { munmap(base, mappedSize) } else { base.deallocate() }
    }

    /// Keeps the counts when the file is this layout's and this endpoint's;
    /// otherwise zeroes them and writes the header, magic last, so a reader
    /// never takes a half-written header for a valid one.
    private func adopt(endpoint: String) {
        let name = Array(endpoint.utf8.prefix(Self.endpointCapacity - 1))
        let header = Self.header(base, size: mappedSize)
        if header?.endpoint == String(decoding: name, as: UTF8.self) {
            base.storeBytes(of: UInt64(getpid()), toByteOffset: 24, as: UInt64.self)
            return
        }
        base.storeBytes(of: 0, as: UInt64.self)
        (base + 8).initializeMemory(as: UInt8.self, repeating: 0, count: mappedSize - 8)
        base.storeBytes(of: MetricCatalogue.fingerprint, toByteOffset: 8, as: UInt64.self)
        base.storeBytes(of: UInt64(MetricCatalogue.slotCount), toByteOffset: 16, as: UInt64.self)
        base.storeBytes(of: UInt64(getpid()), toByteOffset: 24, as: UInt64.self)
        for (index, byte) in name.enumerated() { base.storeBytes(of: byte, toByteOffset: Self.endpointOffset + index, as: UInt8.self) }
        base.storeBytes(of: Self.magic, as: UInt64.self)
    }

    @inline(__always) func add(_ amount: UInt64, at slot: Int) { slots[slot] &+= amount }

    func value(at slot: Int) -> UInt64 { slots[slot] }

    /// The endpoint of a counter file's header, when it is one of this
    /// build's layout and `size` bytes hold all of it.
    static func header(_ pointer: UnsafeRawPointer, size: Int) -> (endpoint: String, pid: UInt64)? {
        guard size >= fileSize, pointer.load(as: UInt64.self) == magic,
              pointer.load(fromByteOffset: 8, as: UInt64.self) == MetricCatalogue.fingerprint,
              pointer.load(fromByteOffset: 16, as: UInt64.self) == UInt64(MetricCatalogue.slotCount) else { return nil }
        let bytes = UnsafeRawBufferPointer(start: pointer + endpointOffset, count: endpointCapacity)
        let name = bytes.prefix { $0 != 0 }
        return (String(decoding: name, as: UTF8.self), pointer.load(fromByteOffset: 24, as: UInt64.self))
    }
}

public struct CounterFileError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}
