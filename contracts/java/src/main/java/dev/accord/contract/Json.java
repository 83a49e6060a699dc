// Hand-written: JSON values as plain Java objects, read from text and written as Python's
// `json.dumps(value, ensure_ascii=False)` writes them. The envelope's size limit is counted in
// the bytes of that text, and the envelope schema (a generated JSON constant) is read with it,
// so the core package needs no JSON library (Jackson's Map form is these same values).
package dev.accord.contract;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A JSON value here is {@code null}, a {@link Boolean}, a {@link Number}, a {@link String}, a
 * {@code List<Object>} or a {@code Map<String, Object>} (insertion order kept), which is what
 * the A2A and MCP Java SDKs hold in their metadata and what Jackson reads a document into.
 */
public final class Json {
    private Json() {}

    /** Read a JSON text: objects as LinkedHashMap, arrays as ArrayList, integers as Long (BigInteger past it), other numbers as Double. */
    public static Object parse(String text) {
        Reader r = new Reader(text);
        r.space();
        Object value = r.value();
        r.space();
        if (r.at < text.length()) {
            throw r.fail("trailing text");
        }
        return value;
    }

    /**
     * The text Python's {@code json.dumps(value, ensure_ascii=False)} writes: separators
     * {@code ", "} and {@code ": "}, keys in the map's order. A Double is written as Python's
     * float repr for the usual magnitudes; a non-finite one is refused (it is not JSON).
     */
    public static String pythonDumps(Object value) {
        StringBuilder out = new StringBuilder();
        write(value, out);
        return out.toString();
    }

    private static void write(Object v, StringBuilder out) {
        if (v == null) {
            out.append("null");
        } else if (v instanceof Boolean b) {
            out.append(b ? "true" : "false");
        } else if (v instanceof Double || v instanceof Float) {
            double d = ((Number) v).doubleValue();
            if (!Double.isFinite(d)) {
                throw new IllegalArgumentException("JSON has no form for a non-finite number");
            }
            out.append(floatRepr(d));
        } else if (v instanceof BigDecimal d) {
            out.append(d.toString());
        } else if (v instanceof Number n) {
            out.append(n.toString());
        } else if (v instanceof CharSequence s) {
            quote(s.toString(), out);
        } else if (v instanceof Map<?, ?> m) {
            out.append('{');
            boolean first = true;
            for (Map.Entry<?, ?> e : m.entrySet()) {
                if (!first) {
                    out.append(", ");
                }
                first = false;
                quote(String.valueOf(e.getKey()), out);
                out.append(": ");
                write(e.getValue(), out);
            }
            out.append('}');
        } else if (v instanceof List<?> l) {
            out.append('[');
            for (int i = 0; i < l.size(); i++) {
                if (i > 0) {
                    out.append(", ");
                }
                write(l.get(i), out);
            }
            out.append(']');
        } else {
            throw new IllegalArgumentException("not a JSON value: " + v.getClass().getName());
        }
    }

    // Python's repr of a float: "1.0", "0.5", "1e+16", "1.5e-07".
    private static String floatRepr(double d) {
        if (d == Math.rint(d) && Math.abs(d) < 1e16) {
            return new BigDecimal(d).toBigInteger() + ".0";
        }
        String s = Double.toString(d);
        int e = s.indexOf('E');
        if (e < 0) {
            return s;
        }
        String mantissa = s.substring(0, e);
        if (mantissa.endsWith(".0")) {
            mantissa = mantissa.substring(0, mantissa.length() - 2);
        }
        int exp = Integer.parseInt(s.substring(e + 1));
        return mantissa + "e" + (exp < 0 ? "-" : "+") + String.format("%02d", Math.abs(exp));
    }

    private static void quote(String s, StringBuilder out) {
        out.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> out.append("\\\"");
                case '\\' -> out.append("\\\\");
                case '\n' -> out.append("\\n");
                case '\r' -> out.append("\\r");
                case '\t' -> out.append("\\t");
                case '\b' -> out.append("\\b");
                case '\f' -> out.append("\\f");
                default -> {
                    if (c < 0x20) {
                        out.append(String.format("\\u%04x", (int) c));
                    } else {
                        out.append(c);
                    }
                }
            }
        }
        out.append('"');
    }

    private static final class Reader {
        private final String text;
        private int at;

        Reader(String text) {
            this.text = text;
        }

        IllegalArgumentException fail(String why) {
            return new IllegalArgumentException("not JSON (" + why + ") at " + at);
        }

        void space() {
            while (at < text.length() && " \t\r\n".indexOf(text.charAt(at)) >= 0) {
                at++;
            }
        }

        Object value() {
            if (at >= text.length()) {
                throw fail("end of text");
            }
            char c = text.charAt(at);
            switch (c) {
                case '{' -> {
                    at++;
                    Map<String, Object> map = new LinkedHashMap<>();
                    space();
                    if (peek('}')) {
                        return map;
                    }
                    do {
                        space();
                        String key = string();
                        space();
                        expect(':');
                        space();
                        map.put(key, value());
                        space();
                    } while (peek(','));
                    expect('}');
                    return map;
                }
                case '[' -> {
                    at++;
                    List<Object> list = new ArrayList<>();
                    space();
                    if (peek(']')) {
                        return list;
                    }
                    do {
                        space();
                        list.add(value());
                        space();
                    } while (peek(','));
                    expect(']');
                    return list;
                }
                case '"' -> {
                    return string();
                }
                default -> {
                    if (text.startsWith("true", at)) {
                        at += 4;
                        return Boolean.TRUE;
                    }
                    if (text.startsWith("false", at)) {
                        at += 5;
                        return Boolean.FALSE;
                    }
                    if (text.startsWith("null", at)) {
                        at += 4;
                        return null;
                    }
                    return number();
                }
            }
        }

        private boolean peek(char c) {
            if (at < text.length() && text.charAt(at) == c) {
                at++;
                return true;
            }
            return false;
        }

        private void expect(char c) {
            if (!peek(c)) {
                throw fail("expected '" + c + "'");
            }
        }

        private Number number() {
            int start = at;
            boolean integral = true;
            while (at < text.length()) {
                char c = text.charAt(at);
                if (c >= '0' && c <= '9' || c == '-' || c == '+') {
                    at++;
                } else if (c == '.' || c == 'e' || c == 'E') {
                    integral = false;
                    at++;
                } else {
                    break;
                }
            }
            String n = text.substring(start, at);
            if (n.isEmpty()) {
                throw fail("unexpected character");
            }
            try {
                if (integral) {
                    BigInteger big = new BigInteger(n);
                    return big.bitLength() < 64 ? (Number) big.longValue() : big;
                }
                return Double.parseDouble(n);
            } catch (NumberFormatException e) {
                throw fail("bad number");
            }
        }

        private String string() {
            expect('"');
            StringBuilder b = new StringBuilder();
            while (true) {
                if (at >= text.length()) {
                    throw fail("unterminated string");
                }
                char c = text.charAt(at++);
                if (c == '"') {
                    return b.toString();
                }
                if (c != '\\') {
                    b.append(c);
                    continue;
                }
                char e = text.charAt(at++);
                switch (e) {
                    case 'n' -> b.append('\n');
                    case 'r' -> b.append('\r');
                    case 't' -> b.append('\t');
                    case 'b' -> b.append('\b');
                    case 'f' -> b.append('\f');
                    case 'u' -> {
                        b.append((char) Integer.parseInt(text.substring(at, at + 4), 16));
                        at += 4;
                    }
                    default -> b.append(e);
                }
            }
        }
    }
}
