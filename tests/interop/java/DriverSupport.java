import java.util.Map;

import org.apache.paimon.shade.jackson2.com.fasterxml.jackson.databind.ObjectMapper;

/**
 * What every command driver does with one command: run it and print its result as one JSON line,
 * or, when it throws, {"error": "<exception> <- <root cause>"} so the test sees Java's reason.
 * Compiled with each driver (tests/interop/java_paimon.py compile_driver).
 */
final class DriverSupport {
    static final ObjectMapper JSON = new ObjectMapper();

    interface Command {
        Object run() throws Exception;
    }

    private DriverSupport() {}

    static void answer(Command command) throws Exception {
        Object result;
        try {
            result = command.run();
        } catch (Exception e) {
            Throwable root = e;
            while (root.getCause() != null) {
                root = root.getCause();
            }
            result = Map.of("error", e + (root == e ? "" : " <- " + root));
        }
        System.out.println(JSON.writeValueAsString(result));
        System.out.flush();
    }
}
