package io.kvtier.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import com.fasterxml.jackson.core.JsonProcessingException;
import org.junit.jupiter.api.Test;

/** A malformed body's 400 says what is wrong and where, in the client's terms, not Jackson's source-location text. */
class BodyReaderTest {

    private static String problem(String body) {
        JsonProcessingException e = catchThrowableOfType(JsonProcessingException.class, () -> Json.MAPPER.readTree(body));
        return BodyReader.jsonProblem(e);
    }

    @Test
    void theProblemNamesLineAndColumnWithoutJacksonsSourceText() {
        assertThat(problem("{\"model\":\"x\", \"messages\": ["))
                .isEqualTo("Unexpected end-of-input: expected close marker for Array (start marker at line 1, column 27)"
                        + " (at line 1, column 28)");
        assertThat(problem("{\"model\": x}")).isEqualTo("Unrecognized token 'x': was expecting (JSON String, Number, Array,"
                + " Object or token 'null', 'true' or 'false') (at line 1, column 11)");
        assertThat(problem("{\"a\": 1,\n}")).isEqualTo("Unexpected character ('}' (code 125)): was expecting double-quote to"
                + " start field name (at line 2, column 1)");
    }
}
