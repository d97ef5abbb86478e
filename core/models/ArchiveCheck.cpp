#include "core/models/private/ArchiveCheck.h"

#include <algorithm>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include <c10/core/ScalarType.h>
#include <caffe2/serialize/inline_container.h>
#include <torch/csrc/jit/api/module.h>

#include "core/models/ScriptedModel.h"

namespace ampbench::models {
namespace {

std::string listText(const std::vector<int64_t>& v) {
    std::string out = "[";
    for (size_t i = 0; i < v.size(); ++i) {
        out += (i ? ", " : "") + std::to_string(v[i]);
    }
    return out + "]";
}

/// Why a tensor of these sizes, strides and offset (in elements of `item` bytes) does
/// not lie inside a storage of `storage_bytes`; "" when it does.
std::string extentProblem(int64_t offset, const std::vector<int64_t>& sizes,
                          const std::vector<int64_t>& strides, int64_t item,
                          int64_t storage_bytes) {
    const std::string shape = "(shape " + listText(sizes) + ", strides " + listText(strides) +
                              ", storage offset " + std::to_string(offset) + ")";
    if (sizes.size() != strides.size() || offset < 0) {
        return shape + " is malformed";
    }
    for (size_t i = 0; i < sizes.size(); ++i) {
        if (sizes[i] < 0 || strides[i] < 0) {
            return shape + " has a negative size or stride";
        }
        if (sizes[i] == 0) {
            return {};  // no element: nothing is read
        }
    }
    int64_t last = offset, end = 0;
    for (size_t i = 0; i < sizes.size(); ++i) {
        int64_t span = 0;
        if (__builtin_mul_overflow(sizes[i] - 1, strides[i], &span) ||
            __builtin_add_overflow(last, span, &last)) {
            return shape + " spans more elements than can be addressed";
        }
    }
    if (__builtin_add_overflow(last, int64_t{1}, &end) || __builtin_mul_overflow(end, item, &end)) {
        return shape + " spans more bytes than can be addressed";
    }
    if (end > storage_bytes) {
        return shape + " reaches byte " + std::to_string(end) + ", but its storage holds " +
               std::to_string(storage_bytes) + " bytes";
    }
    return {};
}

/// One value of a pickle as far as the check needs it: the storages a tensor is
/// rebuilt over, and the integers, strings and tuples that describe them.
struct PickleValue {
    enum class Kind { Other, Int, Str, Global, Tuple, Storage } kind = Kind::Other;
    int64_t i = 0;        ///< Int; Storage: its bytes
    std::string s, name;  ///< Str; Global: module and name; Storage: its record
    int64_t item = 0;     ///< Storage: bytes per element
    /// A tuple's items; what any other container holds (for its nesting only).
    std::vector<PickleValue*> items;
};
/// Owned by the check's arena; shared as the memo shares them.
using Pv = PickleValue*;

/// Bytes per element of the storage type a pickle names ("FloatStorage"), as the
/// unpickler maps it; 0 for a name it does not know.
int64_t storageItemSize(const PickleValue& type) {
    std::optional<c10::ScalarType> scalar;
    if (type.kind == PickleValue::Kind::Global && type.s == "torch") {
#define AMPBENCH_STORAGE_NAME(_, scalar_name)  \
    if (type.name == #scalar_name "Storage") { \
        scalar = c10::k##scalar_name;          \
    }
        AT_FORALL_SCALAR_TYPES_WITH_COMPLEX_AND_QINTS(AMPBENCH_STORAGE_NAME)
#undef AMPBENCH_STORAGE_NAME
    } else if (type.kind == PickleValue::Kind::Int && type.i >= 0 &&
               type.i < static_cast<int64_t>(c10::ScalarType::NumOptions)) {
        scalar = static_cast<c10::ScalarType>(type.i);
    }
    if (!scalar || *scalar == c10::ScalarType::Undefined) {
        return 0;
    }
    return static_cast<int64_t>(c10::elementSize(*scalar));
}

/// Walks one pickle of a TorchScript archive (data.pkl, constants.pkl) opcode by
/// opcode, as LibTorch's unpickler would, without building anything: every storage
/// it names must have its record in the archive, holding at least the bytes it
/// claims, and every tensor rebuilt over a storage must lie inside it. LibTorch takes
/// both on trust: a storage that claims more than its record holds is read past the
/// end (a crash), when the model is used or moved to a GPU.
class PickleCheck {
  public:
    PickleCheck(caffe2::serialize::PyTorchStreamReader& reader, std::string archive,
                std::string path)
        : reader_(reader), archive_(std::move(archive)), path_(std::move(path)) {}

    void run(const uint8_t* data, size_t size) {
        p_ = data;
        end_ = data + size;
        if (byte() != 0x80) {
            fail("does not start as a pickle (protocol 2)");
        }
        byte();
        while (true) {
            const uint8_t op = byte();
            switch (op) {
                case '.':  // STOP
                    checkNesting();
                    return;
                case ']':   // EMPTY_LIST
                case '}':   // EMPTY_DICT
                case 0x88:  // NEWTRUE
                case 0x89:  // NEWFALSE
                case 'N':   // NONE
                    push({});
                    break;
                case ')': {  // EMPTY_TUPLE
                    PickleValue t;
                    t.kind = PickleValue::Kind::Tuple;
                    push(std::move(t));
                } break;
                case 'q':  // BINPUT
                    memoize(byte());
                    break;
                case 'r':  // LONG_BINPUT
                    memoize(u32());
                    break;
                case 'h':  // BINGET
                    recall(byte());
                    break;
                case 'j':  // LONG_BINGET
                    recall(u32());
                    break;
                case '(':  // MARK
                    marks_.push_back(stack_.size());
                    break;
                case 'K':  // BININT1
                    pushInt(byte());
                    break;
                case 'M': {  // BININT2
                    const int64_t lo = byte();
                    pushInt(lo | (int64_t(byte()) << 8));
                } break;
                case 'J':  // BININT
                    pushInt(static_cast<int32_t>(u32()));
                    break;
                case 0x8a: {  // LONG1, 8 bytes only
                    if (byte() != 8) {
                        fail("holds an integer of other than 8 bytes");
                    }
                    uint64_t v = 0;
                    for (int k = 0; k < 8; ++k) {
                        v |= uint64_t(byte()) << (8 * k);
                    }
                    pushInt(static_cast<int64_t>(v));
                } break;
                case 'X': {  // BINUNICODE
                    PickleValue v;
                    v.kind = PickleValue::Kind::Str;
                    v.s = bytes(u32());
                    push(std::move(v));
                } break;
                case 'G':  // BINFLOAT
                    bytes(8);
                    push({});
                    break;
                case 't':  // TUPLE
                    push(tupleOf(popMark()));
                    break;
                case 0x85:  // TUPLE1
                case 0x86:  // TUPLE2
                case 0x87:  // TUPLE3
                    push(tupleOf(take(static_cast<size_t>(op - 0x84))));
                    break;
                case 'l':  // LIST
                case 'd':  // DICT
                    push(containerOf(popMark()));
                    break;
                case 'e':    // APPENDS
                case 'u': {  // SETITEMS
                    const size_t start = marks_.empty() ? 0 : marks_.back();
                    if (start == 0 || start > stack_.size()) {
                        fail("is malformed (a list or dict update without its container)");
                    }
                    const Pv container = stack_[start - 1];
                    fill(*container, popMark());
                } break;
                case 's': {  // SETITEM
                    auto items = take(2);
                    if (stack_.empty()) {
                        fail("is malformed (a dict update without its dict)");
                    }
                    fill(*stack_.back(), items);
                } break;
                case 'c': {  // GLOBAL
                    PickleValue g;
                    g.kind = PickleValue::Kind::Global;
                    g.s = line();
                    g.name = line();
                    push(std::move(g));
                } break;
                case 0x81:  // NEWOBJ
                    take(1);
                    break;
                case 'b':  // BUILD
                case 'R':  // REDUCE
                    reduce();
                    break;
                case 'Q':  // BINPERSID
                    persistent(take(1).front());
                    break;
                default:
                    fail("holds pickle opcode " + std::to_string(op) +
                         ", which TorchScript does not write");
            }
        }
    }

  private:
    [[noreturn]] void fail(const std::string& why) const {
        throw ModelError(path_ + ": " + archive_ + ".pkl " + why +
                         ": not a TorchScript file this workbench can check, so it is not loaded");
    }
    [[noreturn]] void refuse(const std::string& tensor, const std::string& why) const {
        throw ModelError(path_ + ": tensor " + tensor + " " + why +
                         ": the file is damaged or crafted, and is not loaded");
    }
    uint8_t byte() {
        if (p_ >= end_) {
            fail("ends early");
        }
        return *p_++;
    }
    uint32_t u32() {
        uint32_t v = 0;
        for (int k = 0; k < 4; ++k) {
            v |= uint32_t(byte()) << (8 * k);
        }
        return v;
    }
    std::string bytes(size_t n) {
        if (static_cast<size_t>(end_ - p_) < n) {
            fail("ends early");
        }
        std::string s(reinterpret_cast<const char*>(p_), n);
        p_ += n;
        return s;
    }
    std::string line() {
        const auto* nl = static_cast<const uint8_t*>(std::memchr(p_, '\n', end_ - p_));
        if (!nl) {
            fail("ends early");
        }
        std::string s(reinterpret_cast<const char*>(p_), nl - p_);
        p_ = nl + 1;
        return s;
    }
    void push(PickleValue v) {
        arena_.push_back(std::move(v));
        stack_.push_back(&arena_.back());
    }
    void pushInt(int64_t i) {
        PickleValue v;
        v.kind = PickleValue::Kind::Int;
        v.i = i;
        push(std::move(v));
    }
    void memoize(size_t id) {
        if (stack_.empty()) {
            fail("is malformed (a memo entry of nothing)");
        }
        if (id > memo_.size() + (size_t(1) << 20)) {
            fail("is malformed (a memo index far beyond the others)");
        }
        if (id >= memo_.size()) {
            memo_.resize(id + 1);
        }
        memo_[id] = stack_.back();
    }
    void recall(size_t id) {
        if (id >= memo_.size() || !memo_[id]) {
            fail("is malformed (a memo index out of range)");
        }
        stack_.push_back(memo_[id]);
    }
    std::vector<Pv> take(size_t n) {
        if (stack_.size() < n) {
            fail("is malformed (its stack runs empty)");
        }
        std::vector<Pv> out(stack_.end() - static_cast<std::ptrdiff_t>(n), stack_.end());
        stack_.resize(stack_.size() - n);
        return out;
    }
    std::vector<Pv> popMark() {
        if (marks_.empty() || marks_.back() > stack_.size()) {
            fail("is malformed (a container without its mark)");
        }
        const size_t start = marks_.back();
        marks_.pop_back();
        return take(stack_.size() - start);
    }
    /// Containers nested deeper than any module's state: LibTorch builds and frees
    /// them recursively, so a crafted depth would overflow the stack.
    static constexpr int kMaxNesting = 1000;

    static void fill(PickleValue& container, const std::vector<Pv>& items) {
        container.items.insert(container.items.end(), items.begin(), items.end());
    }
    static PickleValue containerOf(std::vector<Pv> items) {
        PickleValue c;
        c.items = std::move(items);
        return c;
    }
    static PickleValue tupleOf(std::vector<Pv> items) {
        PickleValue t = containerOf(std::move(items));
        t.kind = PickleValue::Kind::Tuple;
        return t;
    }

    /// Walks what holds what (without recursion): no container may hold itself or
    /// nest deeper than kMaxNesting, however its items were filled in.
    void checkNesting() const {
        std::unordered_map<const PickleValue*, int> depth;  // -1: on the current path
        std::vector<std::pair<const PickleValue*, size_t>> path;
        for (const auto& root : arena_) {
            if (depth.count(&root)) {
                continue;
            }
            depth[&root] = -1;
            path.emplace_back(&root, 0);
            while (!path.empty()) {
                auto& [node, next] = path.back();
                if (next < node->items.size()) {
                    const PickleValue* child = node->items[next++];
                    auto it = depth.find(child);
                    if (it == depth.end()) {
                        depth[child] = -1;
                        path.emplace_back(child, 0);
                    } else if (it->second < 0) {
                        fail("holds a container that contains itself");
                    }
                    continue;
                }
                int d = 0;
                for (const auto* c : node->items) {
                    d = std::max(d, depth[c] + 1);
                }
                if (d > kMaxNesting) {
                    fail("nests containers more than " + std::to_string(kMaxNesting) + " deep");
                }
                depth[node] = d;
                path.pop_back();
            }
        }
    }
    static bool isInt(const Pv& v) { return v->kind == PickleValue::Kind::Int; }

    /// The string just below the callable: the attribute the tensor is set to.
    std::string nameBelow() const {
        if (!stack_.empty() && stack_.back()->kind == PickleValue::Kind::Str) {
            return "'" + stack_.back()->s + "'";
        }
        return "(unnamed)";
    }

    /// The tensor a storage is read for: LibTorch's pickler writes the attribute's name,
    /// the rebuild function, a mark, then the storage.
    std::string storageName(const std::string& record) const {
        const std::string storage = "(storage " + record + ")";
        if (marks_.empty() || marks_.back() < 2 || marks_.back() > stack_.size()) {
            return storage;
        }
        const auto& callable = *stack_[marks_.back() - 1];
        const auto& key = *stack_[marks_.back() - 2];
        if (callable.kind == PickleValue::Kind::Global && callable.s == "torch._utils" &&
            key.kind == PickleValue::Kind::Str) {
            return "'" + key.s + "' " + storage;
        }
        return storage;
    }

    void persistent(const Pv& id) {
        const auto& t = *id;
        if (t.kind != PickleValue::Kind::Tuple || t.items.size() < 5 ||
            t.items[0]->kind != PickleValue::Kind::Str || t.items[0]->s != "storage" ||
            t.items[2]->kind != PickleValue::Kind::Str || !isInt(t.items[4])) {
            fail("refers to a storage in a form that cannot be checked");
        }
        const int64_t item = storageItemSize(*t.items[1]);
        if (item == 0) {
            fail("refers to a storage of an unknown type");
        }
        const std::string record = archive_ + "/" + t.items[2]->s;
        const int64_t numel = t.items[4]->i;
        int64_t claimed = 0;
        if (numel < 0 || __builtin_mul_overflow(numel, item, &claimed)) {
            refuse(storageName(record), "claims " + std::to_string(numel) + " elements");
        }
        if (numel > 0) {
            if (!reader_.hasRecord(record)) {
                refuse(storageName(record), "is not in the archive");
            }
            auto known = record_bytes_.find(record);
            if (known == record_bytes_.end()) {
                // Read once per record: a pickle may name the same storage many times.
                known = record_bytes_.emplace(record, std::get<1>(reader_.getRecord(record))).first;
            }
            const auto held = known->second;
            if (static_cast<uint64_t>(claimed) > held) {
                refuse(storageName(record), "claims " + std::to_string(numel) + " elements (" +
                                                std::to_string(claimed) +
                                                " bytes), but the archive holds " +
                                                std::to_string(held) + " bytes for it");
            }
        }
        PickleValue s;
        s.kind = PickleValue::Kind::Storage;
        s.s = record;
        s.i = claimed;
        s.item = item;
        push(std::move(s));
    }

    void reduce() {
        auto pair = take(2);
        const auto& callable = *pair[0];
        const bool rebuild =
            callable.kind == PickleValue::Kind::Global && callable.s == "torch._utils" &&
            (callable.name == "_rebuild_tensor_v2" || callable.name == "_rebuild_qtensor");
        if (rebuild) {
            checkTensor(*pair[1], nameBelow());
        }
        // An object built from its state holds what the state holds.
        push(containerOf({pair[1]}));
    }

    /// (storage, offset, sizes, strides, ...): every element inside the storage.
    void checkTensor(const PickleValue& args, const std::string& name) {
        auto ints = [](const Pv& v, std::vector<int64_t>& out) {
            if (v->kind != PickleValue::Kind::Tuple) {
                return false;
            }
            for (const auto& e : v->items) {
                if (!isInt(e)) {
                    return false;
                }
                out.push_back(e->i);
            }
            return true;
        };
        std::vector<int64_t> sizes, strides;
        if (args.kind != PickleValue::Kind::Tuple || args.items.size() < 4 ||
            args.items[0]->kind != PickleValue::Kind::Storage || !isInt(args.items[1]) ||
            !ints(args.items[2], sizes) || !ints(args.items[3], strides)) {
            fail("rebuilds tensor " + name + " in a form that cannot be checked");
        }
        const auto& storage = *args.items[0];
        const std::string why =
            extentProblem(args.items[1]->i, sizes, strides, storage.item, storage.i);
        if (!why.empty()) {
            refuse(name + " (storage " + storage.s + ")", why);
        }
    }

    caffe2::serialize::PyTorchStreamReader& reader_;
    std::string archive_, path_;
    const uint8_t* p_ = nullptr;
    const uint8_t* end_ = nullptr;
    std::deque<PickleValue> arena_;  ///< every value; stable addresses
    std::vector<Pv> stack_, memo_;
    std::vector<size_t> marks_;
    std::map<std::string, size_t> record_bytes_;
};

}  // namespace

/// Checks the archive's pickles before LibTorch loads them (see PickleCheck). An
/// archive that is not a zip, or of the legacy format (model.json), is left to
/// torch::jit::load, which says what it is; tensors of every kind are checked again
/// after loading (checkLoadedTensors).
void checkArchive(const std::string& path, const std::string& bytes) {
    std::istringstream in(bytes);
    std::unique_ptr<caffe2::serialize::PyTorchStreamReader> reader;
    try {
        reader = std::make_unique<caffe2::serialize::PyTorchStreamReader>(&in);
    } catch (const std::exception&) {
        return;
    }
    if (reader->hasRecord("model.json")) {
        return;
    }
    for (const char* archive : {"constants", "data"}) {
        const std::string record = std::string(archive) + ".pkl";
        if (!reader->hasRecord(record)) {
            continue;
        }
        at::DataPtr pickle;
        size_t size = 0;
        try {
            std::tie(pickle, size) = reader->getRecord(record);
        } catch (const std::exception&) {
            continue;  // unreadable: torch::jit::load says so
        }
        PickleCheck(*reader, archive, path).run(static_cast<const uint8_t*>(pickle.get()), size);
    }
}

/// Every tensor the loaded module holds (parameters, buffers, tensor attributes,
/// in lists, dicts and tuples, of every submodule) lies inside its storage.
void checkLoadedTensors(const torch::jit::Module& module, const std::string& path) {
    std::unordered_set<const void*> seen;
    std::vector<std::pair<c10::IValue, std::string>> todo = {{module._ivalue(), ""}};
    auto join = [](const std::string& a, const std::string& b) {
        return a.empty() ? b : a + "." + b;
    };
    while (!todo.empty()) {
        auto [v, name] = std::move(todo.back());
        todo.pop_back();
        if (v.isPtrType() && !seen.insert(v.internalToPointer()).second) {
            continue;
        }
        if (v.isTensor()) {
            const at::Tensor& t = v.toTensor();
            if (!t.defined()) {
                continue;
            }
            const std::string what = "'" + (name.empty() ? std::string("(root)") : name) + "'";
            if (t.layout() != c10::kStrided) {
                throw ModelError(path + ": tensor " + what +
                                 " is sparse, which the workbench does not train");
            }
            const auto& storage = t.storage();
            const auto bytes = static_cast<int64_t>(storage.nbytes());
            std::string why =
                bytes > 0 && storage.data() == nullptr
                    ? "has a storage without data"
                    : extentProblem(t.storage_offset(), t.sizes().vec(), t.strides().vec(),
                                    static_cast<int64_t>(t.element_size()), bytes);
            if (!why.empty()) {
                throw ModelError(path + ": tensor " + what + " " + why +
                                 ": the file is damaged or crafted, and is not used");
            }
        } else if (v.isObject()) {
            const auto obj = v.toObject();
            const auto type = obj->type();
            for (size_t i = 0; i < obj->slots().size(); ++i) {
                const std::string slot =
                    i < type->numAttributes() ? type->getAttributeName(i) : std::to_string(i);
                todo.emplace_back(obj->getSlot(i), join(name, slot));
            }
        } else if (v.isList()) {
            const auto list = v.toList();
            for (size_t i = 0; i < list.size(); ++i) {
                todo.emplace_back(list.get(i), name + "[" + std::to_string(i) + "]");
            }
        } else if (v.isTuple()) {
            const auto& elements = v.toTupleRef().elements();
            for (size_t i = 0; i < elements.size(); ++i) {
                todo.emplace_back(elements[i], name + "[" + std::to_string(i) + "]");
            }
        } else if (v.isGenericDict()) {
            for (const auto& item : v.toGenericDict()) {
                const auto& key = item.key();
                todo.emplace_back(item.value(),
                                  name + "[" + (key.isString() ? key.toStringRef() : "?") + "]");
            }
        }
    }
}

}  // namespace ampbench::models
