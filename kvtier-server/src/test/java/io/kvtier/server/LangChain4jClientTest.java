package io.kvtier.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.langchain4j.data.message.SystemMessage;
import dev.langchain4j.data.message.UserMessage;
import dev.langchain4j.model.chat.request.ChatRequest;
import dev.langchain4j.model.chat.response.ChatResponse;
import dev.langchain4j.model.chat.response.StreamingChatResponseHandler;
import dev.langchain4j.model.StreamingResponseHandler;
import dev.langchain4j.model.openai.OpenAiChatModel;
import dev.langchain4j.model.openai.OpenAiLanguageModel;
import dev.langchain4j.model.openai.OpenAiStreamingChatModel;
import dev.langchain4j.model.openai.OpenAiStreamingLanguageModel;
import dev.langchain4j.model.openai.OpenAiTokenUsage;
import dev.langchain4j.model.output.FinishReason;
import dev.langchain4j.model.output.Response;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * LangChain4j's OpenAI module, unmodified, against the server (with an API key and the host tier):
 * chat and completions, streaming and not, with finish reasons and token usage; cached tokens on
 * a repeated conversation; an injected mid-stream error reaches the caller as an error.
 */
class LangChain4jClientTest {

    private static final String KEY = "test-key-123";
    private static final String FAULT_USER = "inject-mid-stream-fault";
    private static ServerFixture f;

    @BeforeAll
    static void start() {
        f = new ServerFixture(128, 8L << 20, ServerConfig.loopback(0).withApiKey(KEY).withTestOnlyStreamFaultUser(FAULT_USER));
    }

    @AfterAll
    static void stop() {
        f.assertQuiescent();
        f.close();
    }

    private static String v1() {
        return f.base() + "/v1";
    }

    private static ChatRequest conversation(String question) {
        return ChatRequest.builder().messages(
                SystemMessage.from("You tell short stories about a little girl named Lily and her red ball in the park."),
                UserMessage.from(question)).build();
    }

    @Test
    void chatReturnsTextFinishReasonAndUsage() {
        OpenAiChatModel chat = OpenAiChatModel.builder().baseUrl(v1()).apiKey(KEY).modelName(ServerFixture.MODEL)
                .temperature(0.0).maxTokens(12).timeout(Duration.ofSeconds(60)).build();
        ChatResponse r = chat.chat(conversation("What did Lily do?"));
        assertThat(r.aiMessage().text()).isNotBlank();
        assertThat(r.finishReason()).isIn(FinishReason.LENGTH, FinishReason.STOP);
        assertThat(r.tokenUsage().inputTokenCount()).isPositive();
        assertThat(r.tokenUsage().outputTokenCount()).isBetween(1, 12);
    }

    @Test
    void aRepeatedConversationReportsCachedTokens() {
        OpenAiChatModel chat = OpenAiChatModel.builder().baseUrl(v1()).apiKey(KEY).modelName(ServerFixture.MODEL)
                .temperature(0.0).maxTokens(4).timeout(Duration.ofSeconds(60)).build();
        ChatRequest req = conversation("Where did Lily and her friend Tom go on a sunny day?");
        ChatResponse first = chat.chat(req);
        ChatResponse second = chat.chat(req);
        assertThat(second.aiMessage().text()).isEqualTo(first.aiMessage().text());
        OpenAiTokenUsage usage = (OpenAiTokenUsage) second.tokenUsage();
        assertThat(usage.inputTokensDetails()).isNotNull();
        assertThat(usage.inputTokensDetails().cachedTokens()).as("cached tokens of the repeat").isPositive();
    }

    @Test
    void streamingChatDeliversPartialsThenFinishReasonAndUsage() throws Exception {
        OpenAiStreamingChatModel chat = OpenAiStreamingChatModel.builder().baseUrl(v1()).apiKey(KEY)
                .modelName(ServerFixture.MODEL).temperature(0.0).maxTokens(16).timeout(Duration.ofSeconds(60)).build();
        StringBuilder partials = new StringBuilder();
        CompletableFuture<ChatResponse> done = new CompletableFuture<>();
        chat.chat(conversation("Tell me about the ball."), handler(partials, done));
        ChatResponse r = done.get(60, TimeUnit.SECONDS);
        assertThat(partials.toString()).isNotEmpty().isEqualTo(r.aiMessage().text());
        assertThat(r.finishReason()).isIn(FinishReason.LENGTH, FinishReason.STOP);
        assertThat(r.tokenUsage()).isNotNull();
        assertThat(r.tokenUsage().outputTokenCount()).isBetween(1, 16);
    }

    @Test
    void anInjectedMidStreamErrorReachesTheCaller() throws Exception {
        OpenAiStreamingChatModel chat = OpenAiStreamingChatModel.builder().baseUrl(v1()).apiKey(KEY)
                .modelName(ServerFixture.MODEL).temperature(0.0).maxTokens(64).user(FAULT_USER)
                .timeout(Duration.ofSeconds(60)).build();
        CompletableFuture<ChatResponse> done = new CompletableFuture<>();
        chat.chat(conversation("Go on."), handler(new StringBuilder(), done));
        assertThatThrownBy(() -> done.get(60, TimeUnit.SECONDS)).isInstanceOf(java.util.concurrent.ExecutionException.class)
                .cause().hasMessageContaining("injected mid-stream failure");
    }

    @Test
    void completionsReturnTextFinishReasonAndUsage() {
        OpenAiLanguageModel lm = OpenAiLanguageModel.builder().baseUrl(v1()).apiKey(KEY).modelName(ServerFixture.MODEL)
                .temperature(0.0).timeout(Duration.ofSeconds(60)).build();
        Response<String> r = lm.generate("Once upon a time");
        assertThat(r.content()).isNotBlank();
        assertThat(r.finishReason()).isIn(FinishReason.STOP, FinishReason.LENGTH);
        assertThat(r.tokenUsage().inputTokenCount()).isEqualTo(5);
        assertThat(r.tokenUsage().outputTokenCount()).isPositive();
    }

    @Test
    void streamingCompletionsDeliverTextThenFinishReasonAndUsage() throws Exception {
        OpenAiStreamingLanguageModel lm = OpenAiStreamingLanguageModel.builder().baseUrl(v1()).apiKey(KEY)
                .modelName(ServerFixture.MODEL).temperature(0.0).timeout(Duration.ofSeconds(60)).build();
        StringBuilder parts = new StringBuilder();
        CompletableFuture<Response<String>> done = new CompletableFuture<>();
        lm.generate("Once upon a time", new StreamingResponseHandler<>() {
            @Override
            public void onNext(String token) {
                parts.append(token);
            }

            @Override
            public void onComplete(Response<String> response) {
                done.complete(response);
            }

            @Override
            public void onError(Throwable error) {
                done.completeExceptionally(error);
            }
        });
        Response<String> r = done.get(60, TimeUnit.SECONDS);
        assertThat(parts.toString()).isNotBlank();
        assertThat(r.finishReason()).isIn(FinishReason.STOP, FinishReason.LENGTH);
        assertThat(r.tokenUsage()).isNotNull();
        assertThat(r.tokenUsage().outputTokenCount()).isPositive();
    }

    @Test
    void aWrongKeyIsRefused() {
        OpenAiChatModel chat = OpenAiChatModel.builder().baseUrl(v1()).apiKey("wrong").modelName(ServerFixture.MODEL)
                .maxRetries(0).timeout(Duration.ofSeconds(60)).build();
        assertThatThrownBy(() -> chat.chat(conversation("Hi"))).hasMessageContaining("API key");
    }

    private static StreamingChatResponseHandler handler(StringBuilder partials, CompletableFuture<ChatResponse> done) {
        return new StreamingChatResponseHandler() {
            @Override
            public void onPartialResponse(String partial) {
                partials.append(partial);
            }

            @Override
            public void onCompleteResponse(ChatResponse response) {
                done.complete(response);
            }

            @Override
            public void onError(Throwable error) {
                done.completeExceptionally(error);
            }
        };
    }
}
