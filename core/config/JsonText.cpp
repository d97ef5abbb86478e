#include "core/config/JsonText.h"

#include <utility>
#include <vector>

namespace ampbench::config {
namespace {

using nlohmann::json;

/// Builds the document like nlohmann's own DOM parser, and knows at each moment
/// the path of the value being read, so an error can name the field.
class Builder : public nlohmann::json_sax<json> {
  public:
    explicit Builder(std::size_t max_depth) : max_depth_(max_depth) {}

    json root;
    FieldError error;

    bool null() override { return put(json(nullptr)); }
    bool boolean(bool v) override { return put(json(v)); }
    bool number_integer(number_integer_t v) override { return put(json(v)); }
    bool number_unsigned(number_unsigned_t v) override { return put(json(v)); }
    bool number_float(number_float_t v, const string_t&) override { return put(json(v)); }
    bool string(string_t& v) override { return put(json(std::move(v))); }
    bool binary(binary_t& v) override { return put(json::binary(std::move(v))); }

    bool start_object(std::size_t) override { return open(json::object()); }
    bool start_array(std::size_t) override { return open(json::array()); }
    bool end_object() override { return close(); }
    bool end_array() override { return close(); }
    bool key(string_t& k) override {
        frames_.back().key = k;
        return true;
    }

    bool parse_error(std::size_t position, const std::string& token,
                     const nlohmann::detail::exception& e) override {
        if (e.id == 406) {  // out_of_range: a number that overflows a double
            error = FieldError{pathHere(), token,
                               "is too large for a number (the largest is about 1.8e308)"};
            return false;
        }
        // what() reads "[json.exception.parse_error.101] parse error at line 1, ...".
        std::string message = e.what();
        if (const auto bracket = message.find("] ");
            message.rfind("[json.", 0) == 0 && bracket != std::string::npos) {
            message.erase(0, bracket + 2);
        }
        error = FieldError{"(file)", "", "not valid JSON: " + message};
        (void)position;
        return false;
    }

  private:
    struct Frame {
        json* value;
        std::string key;        ///< objects: the key being read
        std::size_t index = 0;  ///< arrays: the index being read
    };

    /// "optimizer.lr", "arms[1].name": where the next value goes.
    std::string pathHere() const {
        std::string path;
        for (const Frame& f : frames_) {
            if (f.value->is_object()) {
                path += (path.empty() ? "" : ".") + f.key;
            } else {
                path += "[" + std::to_string(f.index) + "]";
            }
        }
        return path.empty() ? "(file)" : path;
    }

    json* insert(json&& v) {
        if (frames_.empty()) {
            root = std::move(v);
            return &root;
        }
        Frame& f = frames_.back();
        if (f.value->is_object()) {
            json& slot = (*f.value)[f.key];
            slot = std::move(v);
            return &slot;
        }
        f.value->push_back(std::move(v));
        ++f.index;
        return &f.value->back();
    }

    bool put(json&& v) {
        insert(std::move(v));
        return true;
    }

    bool open(json&& container) {
        if (frames_.size() >= max_depth_) {
            error = FieldError{pathHere(), "",
                               "nested more than " + std::to_string(max_depth_) +
                                   " levels deep; a spec needs only a few"};
            return false;
        }
        // An array's index moves on when its element closes, not here.
        json* slot = insert(std::move(container));
        if (!frames_.empty() && frames_.back().value->is_array())
            --frames_.back().index;
        frames_.push_back(Frame{slot, {}, 0});
        return true;
    }

    bool close() {
        frames_.pop_back();
        if (!frames_.empty() && frames_.back().value->is_array())
            ++frames_.back().index;
        return true;
    }

    std::size_t max_depth_;
    std::vector<Frame> frames_;
};

}  // namespace

std::optional<json> parseJsonText(const std::string& text, FieldError& error,
                                  std::size_t max_depth) {
    Builder builder(max_depth);
    if (!json::sax_parse(text, &builder)) {
        error = builder.error;
        if (error.field.empty())
            error = FieldError{"(file)", "", "not valid JSON"};
        return std::nullopt;
    }
    return std::move(builder.root);
}

}  // namespace ampbench::config
